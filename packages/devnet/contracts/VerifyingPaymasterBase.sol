// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "@account-abstraction/contracts/core/BasePaymaster.sol";
import "@account-abstraction/contracts/core/Helpers.sol";
import "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/**
 * The verifying paymaster of the EntryPoint samples, for EntryPoint v0.8 and v0.9 (whose npm
 * releases ship no samples): it pays for an operation that an off-chain signer approved.
 * paymasterData = abi.encode(uint48 validUntil, uint48 validAfter) ‖ signature, where the signer
 * signs (as a personal message) getHash(userOp, validUntil, validAfter) — the same layout and
 * hash as the v0.7 sample, so one signing service serves all. Each release's BasePaymaster has
 * its own constructor: VerifyingPaymaster08.sol and VerifyingPaymaster09.sol make it.
 */
abstract contract VerifyingPaymasterBase is BasePaymaster {
    address public immutable verifyingSigner;

    uint256 internal constant VALID_TIMESTAMP_OFFSET = PAYMASTER_DATA_OFFSET;
    uint256 internal constant SIGNATURE_OFFSET = VALID_TIMESTAMP_OFFSET + 64;

    constructor(address _verifyingSigner) {
        verifyingSigner = _verifyingSigner;
    }

    /// The hash the signer approves: every field but the paymaster data, bound to chain and paymaster.
    function getHash(PackedUserOperation calldata userOp, uint48 validUntil, uint48 validAfter) public view returns (bytes32) {
        return keccak256(
            abi.encode(
                userOp.sender,
                userOp.nonce,
                keccak256(userOp.initCode),
                keccak256(userOp.callData),
                userOp.accountGasLimits,
                uint256(bytes32(userOp.paymasterAndData[PAYMASTER_VALIDATION_GAS_OFFSET:PAYMASTER_DATA_OFFSET])),
                userOp.preVerificationGas,
                userOp.gasFees,
                block.chainid,
                address(this),
                validUntil,
                validAfter
            )
        );
    }

    function _validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32, uint256)
        internal view override returns (bytes memory context, uint256 validationData)
    {
        (uint48 validUntil, uint48 validAfter, bytes calldata signature) = parsePaymasterAndData(userOp.paymasterAndData);
        require(signature.length == 64 || signature.length == 65, "VerifyingPaymaster: invalid signature length in paymasterAndData");
        bytes32 hash = MessageHashUtils.toEthSignedMessageHash(getHash(userOp, validUntil, validAfter));
        // A wrong signer is a signature failure (reported to the EntryPoint), not a revert.
        bool failed = verifyingSigner != ECDSA.recover(hash, signature);
        return ("", _packValidationData(failed, validUntil, validAfter));
    }

    /// The validity range, and the signature: what follows the range.
    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public pure virtual returns (uint48 validUntil, uint48 validAfter, bytes calldata signature)
    {
        (validUntil, validAfter) = abi.decode(paymasterAndData[VALID_TIMESTAMP_OFFSET:], (uint48, uint48));
        signature = paymasterAndData[SIGNATURE_OFFSET:];
    }
}
