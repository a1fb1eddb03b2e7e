// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@account-abstraction/contracts/core/BasePaymaster.sol";

/**
 * A paymaster whose postOp does work that depends on its context, for exercising
 * paymasterPostOpGasLimit: it sponsors every operation; paymasterData is a uint32 N, returned as
 * the context, and postOp then records the operation's cost and hashes N rounds over it.
 * Each EntryPoint release's BasePaymaster has its own constructor: PostOpWorkPaymaster.sol
 * (v0.7, v0.8) and PostOpWorkPaymaster09.sol (v0.9) make it.
 */
abstract contract PostOpWork is BasePaymaster {
    /// What each sender's sponsored operations cost, as postOp reports it.
    mapping(address => uint256) public sponsored;
    /// The last postOp's digest, so its work is not optimised away.
    bytes32 public digest;

    function _validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32, uint256)
        internal pure override returns (bytes memory context, uint256 validationData)
    {
        uint32 rounds = userOp.paymasterAndData.length >= PAYMASTER_DATA_OFFSET + 4
            ? uint32(bytes4(userOp.paymasterAndData[PAYMASTER_DATA_OFFSET:PAYMASTER_DATA_OFFSET + 4]))
            : 0;
        return (abi.encode(userOp.sender, rounds), 0);
    }

    function _postOp(PostOpMode, bytes calldata context, uint256 actualGasCost, uint256) internal override {
        (address sender, uint32 rounds) = abi.decode(context, (address, uint32));
        sponsored[sender] += actualGasCost;
        bytes32 h = digest;
        for (uint256 i = 0; i < rounds; i++) h = keccak256(abi.encode(h, i));
        digest = h;
    }
}
