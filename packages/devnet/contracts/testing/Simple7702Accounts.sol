// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

// The operation structs of EntryPoint v0.6 (`UserOperationV06`) and v0.7 (`PackedUserOperation`).
import {PackedUserOperation, UserOperationV06} from "../rules/RuleProbes.sol";

/**
 * An EIP-7702 account for an EntryPoint before v0.8, which knows no `0x7702` marker: an EOA
 * delegates to it, and it is its own owner. It validates the userOpHash signed by the EOA's key
 * as a personal message (as v0.6's and v0.7's SimpleAccount sign it), and executes SimpleAccount's
 * calls of its version, for the EntryPoint or the EOA itself. It keeps no storage, so a
 * delegation needs no initialisation and nobody can front-run one.
 */
abstract contract Simple7702AccountBase {
    uint256 internal constant SIG_VALIDATION_FAILED = 1;
    /// Half the order of secp256k1: a signature with a higher `s` is refused (EIP-2).
    uint256 internal constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// The EntryPoint this account serves.
    function entryPoint() public pure virtual returns (address);

    function _validate(bytes calldata signature, bytes32 userOpHash, uint256 missingAccountFunds) internal returns (uint256) {
        require(msg.sender == entryPoint(), "account: not from EntryPoint");
        uint256 validationData = _signer(userOpHash, signature) == address(this) ? 0 : SIG_VALIDATION_FAILED;
        if (missingAccountFunds != 0) {
            (bool success,) = payable(msg.sender).call{value: missingAccountFunds}("");
            (success);
        }
        return validationData;
    }

    /// The signer of `userOpHash` as an EIP-191 personal message, or the zero address.
    function _signer(bytes32 userOpHash, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_ORDER) return address(0);
        return ecrecover(keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", userOpHash)), v, r, s);
    }

    function _onlyEntryPointOrSelf() internal view {
        require(msg.sender == entryPoint() || msg.sender == address(this), "account: not from EntryPoint or self");
    }

    function _call(address target, uint256 value, bytes calldata data) internal {
        (bool success, bytes memory result) = target.call{value: value}(data);
        if (!success) {
            assembly ("memory-safe") {
                revert(add(result, 32), mload(result))
            }
        }
    }

    /// SimpleAccount's `execute`, the same on every version.
    function execute(address dest, uint256 value, bytes calldata func) external {
        _onlyEntryPointOrSelf();
        _call(dest, value, func);
    }

    receive() external payable {}
}

/// The EIP-7702 account of EntryPoint v0.6 (`0x5FF137D4…2789`), with v0.6 SimpleAccount's `executeBatch(address[], bytes[])`.
contract Simple7702AccountV06 is Simple7702AccountBase {
    function entryPoint() public pure override returns (address) {
        return 0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789;
    }

    function validateUserOp(UserOperationV06 calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds) external returns (uint256) {
        return _validate(userOp.signature, userOpHash, missingAccountFunds);
    }

    function executeBatch(address[] calldata dest, bytes[] calldata func) external {
        _onlyEntryPointOrSelf();
        require(dest.length == func.length, "wrong array lengths");
        for (uint256 i = 0; i < dest.length; i++) _call(dest[i], 0, func[i]);
    }
}

/// The EIP-7702 account of EntryPoint v0.7 (`0x00000000…a032`), with v0.7 SimpleAccount's `executeBatch(address[], uint256[], bytes[])`.
contract Simple7702AccountV07 is Simple7702AccountBase {
    function entryPoint() public pure override returns (address) {
        return 0x0000000071727De22E5E9d8BAf0edAc6f37da032;
    }

    function validateUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds) external returns (uint256) {
        return _validate(userOp.signature, userOpHash, missingAccountFunds);
    }

    function executeBatch(address[] calldata dest, uint256[] calldata value, bytes[] calldata func) external {
        _onlyEntryPointOrSelf();
        require(dest.length == func.length && (value.length == 0 || value.length == func.length), "wrong array lengths");
        for (uint256 i = 0; i < dest.length; i++) _call(dest[i], value.length == 0 ? 0 : value[i], func[i]);
    }
}
