// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

// Purpose-built ERC-4337 entities for ERC-7562 rule tests. Each runs the "rule" it is given
// during validation: the account reads it from the operation's signature, the paymaster from its
// paymaster data, the factory from the deployment call. Rebuild: `pnpm --filter @bundlekit/devnet build:rules`.

/// A contract with storage, code and a mapping keyed by address: what validation code reaches into.
contract RuleTarget {
    mapping(address => uint256) public balances;
    uint256 public shared;

    function ping() external pure returns (uint256) {
        return 1;
    }

    function setShared(uint256 value) external {
        shared = value;
    }

    function touch(address who) external returns (uint256) {
        balances[who] += 1;
        return balances[who];
    }

    receive() external payable {}
}

/// The behaviours a rule string selects. `target` is a RuleTarget, `entryPoint` the EntryPoint.
abstract contract RuleRunner {
    address public immutable entryPoint;
    RuleTarget public immutable target;
    uint256 private ownSlot;
    /// A mapping keyed by address, so another operation's validation can read a slot associated with its sender.
    mapping(address => uint256) public credits;

    constructor(address entryPoint_, RuleTarget target_) {
        entryPoint = entryPoint_;
        target = target_;
    }

    function burn() external pure {
        uint256 x;
        while (true) x++;
    }

    function run(string memory rule, address sender) internal {
        bytes32 r = keccak256(bytes(rule));
        uint256 v;
        bytes memory raw = bytes(rule);
        if (raw.length == 25 && bytes5(raw) == "READ:") {
            // READ:<20-byte address>: read this contract's entry in that contract's `credits`.
            address peer;
            assembly { peer := shr(96, mload(add(raw, 37))) }
            v = RuleRunner(peer).credits(address(this));
            assembly { mstore(0, v) }
            return;
        }
        if (r == keccak256("") || r == keccak256("OK")) return;
        if (r == keccak256("TIMESTAMP")) v = block.timestamp;
        else if (r == keccak256("NUMBER")) v = block.number;
        else if (r == keccak256("COINBASE")) v = uint160(address(block.coinbase));
        else if (r == keccak256("ORIGIN")) v = uint160(tx.origin);
        else if (r == keccak256("GASPRICE")) v = tx.gasprice;
        else if (r == keccak256("GASLIMIT")) v = block.gaslimit;
        else if (r == keccak256("BASEFEE")) v = block.basefee;
        else if (r == keccak256("PREVRANDAO")) v = block.prevrandao;
        else if (r == keccak256("BLOCKHASH")) v = uint256(blockhash(0));
        else if (r == keccak256("SELFBALANCE")) v = address(this).balance;
        else if (r == keccak256("BALANCE")) v = address(target).balance;
        else if (r == keccak256("GAS")) v = gasleft();
        else if (r == keccak256("GAS_CALL")) v = target.ping();
        else if (r == keccak256("OWN_STORAGE")) ownSlot = 1;
        else if (r == keccak256("ASSOCIATED_STORAGE")) v = target.touch(sender);
        else if (r == keccak256("OWN_ASSOCIATED_STORAGE")) v = target.touch(address(this));
        else if (r == keccak256("OTHER_STORAGE_READ")) v = target.shared();
        else if (r == keccak256("REVERT_IF_SHARED")) require(target.shared() == 0, "shared is set");
        else if (r == keccak256("EXTCODESIZE_NO_CODE")) v = address(0xdeaDDeADDEaDdeaDdEAddEADDEAdDeadDEADDEaD).code.length;
        else if (r == keccak256("CALL_NO_CODE")) v = callLength(address(0xdeaDDeADDEaDdeaDdEAddEADDEAdDeadDEADDEaD), 0, "");
        else if (r == keccak256("CALL_VALUE")) v = callLength(address(target), 1, "");
        else if (r == keccak256("ENTRYPOINT_BALANCE_OF")) v = callLength(entryPoint, 0, abi.encodeWithSignature("balanceOf(address)", sender));
        else if (r == keccak256("ECRECOVER")) v = uint160(ecrecover(bytes32(0), 27, bytes32(uint256(1)), bytes32(uint256(2))));
        else if (r == keccak256("CREATE2")) v = uint160(address(new RuleTarget{salt: bytes32(uint256(1))}()));
        else if (r == keccak256("OUT_OF_GAS")) try this.burn{gas: 20000}() {} catch { v = 1; }
        else if (r == keccak256("TLOAD_OTHER")) v = transientOf(address(target));
        else revert(string.concat("unknown rule ", rule));
        // Keep the value live so the compiler cannot drop the read.
        assembly { mstore(0, v) }
    }

    function callLength(address to, uint256 value, bytes memory data) internal returns (uint256) {
        (, bytes memory out) = to.call{value: value}(data);
        return out.length;
    }

    function transientOf(address) internal view returns (uint256 v) {
        assembly { v := tload(0) }
    }
}

struct UserOperationV06 {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    uint256 callGasLimit;
    uint256 verificationGasLimit;
    uint256 preVerificationGas;
    uint256 maxFeePerGas;
    uint256 maxPriorityFeePerGas;
    bytes paymasterAndData;
    bytes signature;
}

struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    bytes32 gasFees;
    bytes paymasterAndData;
    bytes signature;
}

/// An account (EntryPoint v0.6 and v0.7/v0.8 entry points) whose validation runs the rule in its signature; also a paymaster.
contract RuleAccount is RuleRunner {
    constructor(address entryPoint_, RuleTarget target_) RuleRunner(entryPoint_, target_) {}

    function validateUserOp(UserOperationV06 calldata op, bytes32, uint256 missingAccountFunds) external returns (uint256) {
        return validate(string(op.signature), missingAccountFunds);
    }

    function validateUserOp(PackedUserOperation calldata op, bytes32, uint256 missingAccountFunds) external returns (uint256) {
        return validate(string(op.signature), missingAccountFunds);
    }

    function validate(string memory rule, uint256 missingAccountFunds) internal returns (uint256) {
        require(msg.sender == entryPoint, "not from EntryPoint");
        run(rule, address(this));
        if (missingAccountFunds > 0) {
            (bool ok,) = payable(msg.sender).call{value: missingAccountFunds}("");
            (ok);
        }
        return 0;
    }

    function execute() external {}

    /// Staked accounts answer for their paymaster's failures (EREP-030).
    function addStake(uint32 unstakeDelaySec) external payable {
        (bool ok,) = entryPoint.call{value: msg.value}(abi.encodeWithSignature("addStake(uint32)", unstakeDelaySec));
        require(ok, "addStake failed");
    }

    /// Also a paymaster that sponsors anything, so that one address can play two roles (STO-040).
    function validatePaymasterUserOp(UserOperationV06 calldata, bytes32, uint256) external pure returns (bytes memory context, uint256) {
        return ("", 0);
    }

    function validatePaymasterUserOp(PackedUserOperation calldata, bytes32, uint256) external pure returns (bytes memory context, uint256) {
        return ("", 0);
    }

    receive() external payable {}
}

/// A factory whose deployment runs a rule, then creates a RuleAccount with CREATE2.
contract RuleFactory is RuleRunner {
    constructor(address entryPoint_, RuleTarget target_) RuleRunner(entryPoint_, target_) {}

    function createAccount(uint256 salt, string calldata rule) external returns (address account) {
        account = getAddress(salt);
        run(rule, account);
        if (account.code.length == 0) new RuleAccount{salt: bytes32(salt)}(entryPoint, target);
    }

    function getAddress(uint256 salt) public view returns (address) {
        bytes32 hash = keccak256(
            abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), keccak256(abi.encodePacked(type(RuleAccount).creationCode, abi.encode(entryPoint, target))))
        );
        return address(uint160(uint256(hash)));
    }

    function addStake(uint32 unstakeDelaySec) external payable {
        (bool ok,) = entryPoint.call{value: msg.value}(abi.encodeWithSignature("addStake(uint32)", unstakeDelaySec));
        require(ok, "addStake failed");
    }
}

/// A paymaster whose validation runs the rule in its paymaster data. `CONTEXT:<n>` (n in decimal)
/// returns a context of n zero bytes instead, and its postOp does nothing.
contract RulePaymaster is RuleRunner {
    constructor(address entryPoint_, RuleTarget target_) RuleRunner(entryPoint_, target_) {}

    function validatePaymasterUserOp(UserOperationV06 calldata op, bytes32, uint256) external returns (bytes memory context, uint256) {
        return (validate(op.paymasterAndData[20:], op.sender), 0);
    }

    function validatePaymasterUserOp(PackedUserOperation calldata op, bytes32, uint256) external returns (bytes memory context, uint256) {
        return (validate(op.paymasterAndData[52:], op.sender), 0);
    }

    function validate(bytes calldata rule, address sender) internal returns (bytes memory context) {
        if (rule.length > 8 && bytes8(rule[:8]) == "CONTEXT:") {
            uint256 n;
            for (uint256 i = 8; i < rule.length; i++) n = n * 10 + (uint8(rule[i]) - 48);
            return new bytes(n);
        }
        run(string(rule), sender);
        return "";
    }

    /// EntryPoint v0.6.
    function postOp(uint8, bytes calldata, uint256) external {}

    /// EntryPoint v0.7 and v0.8.
    function postOp(uint8, bytes calldata, uint256, uint256) external {}

    function addStake(uint32 unstakeDelaySec) external payable {
        (bool ok,) = entryPoint.call{value: msg.value}(abi.encodeWithSignature("addStake(uint32)", unstakeDelaySec));
        require(ok, "addStake failed");
    }

    function deposit() external payable {
        (bool ok,) = entryPoint.call{value: msg.value}(abi.encodeWithSignature("depositTo(address)", address(this)));
        require(ok, "deposit failed");
    }
}
