// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

// Purpose-built ERC-4337 entities for ERC-7562 rule tests. Each runs the "rule" it is given
// during validation: the account reads it from the operation's signature, the paymaster from its
// paymaster data, the factory from the deployment call. Rebuild: `pnpm --filter @bundlekit/devnet build:rules`.

/// Creates a contract whose code is one STOP, with CREATE or (salt 1) CREATE2.
function createTiny(bool salted) returns (address created) {
    // PUSH1 0 PUSH1 0 MSTORE8 PUSH1 1 PUSH1 0 RETURN: returns the runtime code 0x00.
    bytes memory init = hex"600060005360016000f3";
    assembly {
        switch salted
        case 0 { created := create(0, add(init, 32), mload(init)) }
        default { created := create2(0, add(init, 32), mload(init), 1) }
    }
}

/// A contract with storage, code and a mapping keyed by address: what validation code reaches into.
contract RuleTarget {
    mapping(address => uint256) public balances;
    uint256 public shared;
    /// A contract whose code is the single byte 0x0c, an opcode no fork has assigned (OP-013).
    address public immutable unassigned;

    constructor() {
        address code;
        // Init code that returns the one-byte runtime code 0x0c: PUSH1 0x0c PUSH1 0 MSTORE8 PUSH1 1 PUSH1 0 RETURN.
        bytes memory init = hex"600c60005360016000f3";
        assembly { code := create(0, add(init, 32), mload(init)) }
        require(code != address(0), "unassigned code not deployed");
        unassigned = code;
    }

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

    /// CREATE from a contract that is not an entity.
    function create() external returns (address) {
        return createTiny(false);
    }

    /// CREATE of `init` from a contract that is not an entity; 0 when the creation fails.
    function createFrom(bytes memory init) external returns (address created) {
        assembly { created := create(0, add(init, 32), mload(init)) }
    }

    /// SELFDESTRUCT (since Cancun it only moves the balance of a contract not created in the same transaction).
    function destroy() external {
        selfdestruct(payable(address(this)));
    }

    /// INVALID (0xFE), which ends the frame and burns its gas.
    function invalid() external pure {
        assembly { invalid() }
    }

    /// Every precompile of Prague after ecrecover, each given a valid input of zeros (a zero commitment
    /// and proof for the point evaluation), 100,000 gas, and required to succeed.
    function precompiles() external view returns (uint256 v) {
        uint16[18] memory sizes = [0, 0, 32, 32, 32, 96, 128, 96, 0, 213, 192, 256, 160, 512, 288, 384, 64, 128];
        for (uint160 a = 2; a <= 0x11; a++) {
            bytes memory input = new bytes(sizes[a]);
            if (a == 0x0a) input = pointEvaluationOfZero();
            (bool ok, bytes memory out) = address(a).staticcall{gas: 100000}(input);
            require(ok, "precompile failed");
            v += out.length;
        }
    }

    /// versioned hash, z = 0, y = 0, the commitment to the zero polynomial and its proof (both the G1 point at infinity).
    function pointEvaluationOfZero() internal view returns (bytes memory input) {
        bytes memory infinity = new bytes(48);
        infinity[0] = 0xc0;
        bytes32 hash = sha256(infinity);
        bytes32 versioned = (hash & bytes32(uint256(type(uint248).max))) | bytes32(uint256(1) << 248);
        input = abi.encodePacked(versioned, bytes32(0), bytes32(0), infinity, infinity);
    }

    /// TLOAD of a slot not associated with anyone (OP-070 treats it like SLOAD).
    function transientRead() external view returns (uint256 v) {
        assembly { v := tload(1) }
    }

    /// TSTORE to `who`'s entry of a transient mapping at slot 2: a slot associated with `who`.
    function transientTouch(address who) external {
        bytes32 slot = keccak256(abi.encode(who, uint256(2)));
        assembly { tstore(slot, add(tload(slot), 1)) }
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
        else if (r == keccak256("CREATE2")) v = uint160(createTiny(true));
        else if (r == keccak256("OUT_OF_GAS")) try this.burn{gas: 20000}() {} catch { v = 1; }
        // Init code JUMPDEST PUSH1 0 JUMP loops until out of gas, in a frame of 100,000 gas (the 1/64 left is enough to return).
        else if (r == keccak256("CREATE_OUT_OF_GAS")) v = uint160(target.createFrom{gas: 100000}(hex"5b600056"));
        // Init code PUSH1 0 PUSH1 0 REVERT.
        else if (r == keccak256("CREATE_REVERTS")) v = uint160(target.createFrom(hex"60006000fd"));
        else if (r == keccak256("BLOBHASH")) v = uint256(blobhash(0));
        else if (r == keccak256("BLOBBASEFEE")) v = block.blobbasefee;
        else if (r == keccak256("INVALID")) try target.invalid{gas: 10000}() {} catch { v = 1; }
        else if (r == keccak256("UNASSIGNED")) v = callLength(target.unassigned(), 0, "", 10000);
        else if (r == keccak256("SELFDESTRUCT")) target.destroy();
        else if (r == keccak256("CREATE")) v = uint160(createTiny(false));
        else if (r == keccak256("CREATE_IN_HELPER")) v = uint160(target.create());
        else if (r == keccak256("CALL_SENDER")) v = callLength(sender, 0, "");
        else if (r == keccak256("EXTCODEHASH_SENDER")) v = uint256(sender.codehash);
        else if (r == keccak256("EXTCODEHASH_NO_CODE")) v = uint256(address(0xdeaDDeADDEaDdeaDdEAddEADDEAdDeadDEADDEaD).codehash);
        else if (r == keccak256("STATICCALL_NO_CODE")) v = staticLength(address(0xdeaDDeADDEaDdeaDdEAddEADDEAdDeadDEADDEaD), "");
        else if (r == keccak256("ENTRYPOINT_CODESIZE_ISZERO")) v = entryPointHasCode();
        else if (r == keccak256("ENTRYPOINT_CODESIZE")) v = entryPoint.code.length;
        else if (r == keccak256("ENTRYPOINT_CODEHASH")) v = uint256(entryPoint.codehash);
        else if (r == keccak256("ENTRYPOINT_DEPOSIT_FOR_SENDER")) v = callLength(entryPoint, 1, abi.encodeWithSignature("depositTo(address)", sender));
        else if (r == keccak256("ENTRYPOINT_DEPOSIT_FOR_TARGET")) v = callLength(entryPoint, 1, abi.encodeWithSignature("depositTo(address)", address(target)));
        else if (r == keccak256("ENTRYPOINT_FALLBACK")) v = callLength(entryPoint, 1, "");
        else if (r == keccak256("ENTRYPOINT_INCREMENT_NONCE")) v = callLength(entryPoint, 0, abi.encodeWithSignature("incrementNonce(uint192)", uint192(1)));
        else if (r == keccak256("PRECOMPILES")) v = target.precompiles();
        else if (r == keccak256("P256VERIFY")) v = staticLength(address(0x100), new bytes(160));
        else if (r == keccak256("TRANSIENT_OWN")) v = transientOwn();
        else if (r == keccak256("TRANSIENT_OTHER_READ")) v = target.transientRead();
        else if (r == keccak256("TRANSIENT_ASSOCIATED")) target.transientTouch(sender);
        else revert(string.concat("unknown rule ", rule));
        // Keep the value live so the compiler cannot drop the read.
        assembly { mstore(0, v) }
    }

    function callLength(address to, uint256 value, bytes memory data) internal returns (uint256) {
        (, bytes memory out) = to.call{value: value}(data);
        return out.length;
    }

    function callLength(address to, uint256 value, bytes memory data, uint256 gas) internal returns (uint256) {
        (, bytes memory out) = to.call{value: value, gas: gas}(data);
        return out.length;
    }

    function staticLength(address to, bytes memory data) internal view returns (uint256) {
        (, bytes memory out) = to.staticcall{gas: 50000}(data);
        return out.length;
    }

    /// `EXTCODESIZE` of the EntryPoint straight into `ISZERO` (OP-051), as a contract checks it before `depositTo`.
    function entryPointHasCode() internal view returns (uint256 v) {
        address ep = entryPoint;
        assembly { v := iszero(extcodesize(ep)) }
    }

    /// TSTORE then TLOAD of the contract's own transient slot 0.
    function transientOwn() internal returns (uint256 v) {
        assembly {
            tstore(0, 1)
            v := tload(0)
        }
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

/// The account a RuleFactory deploys: a proxy to the factory's RuleAccount, as most accounts are, so
/// that its code is small enough to deploy within the validation's gas.
contract RuleAccountProxy {
    address private immutable implementation;

    constructor(address implementation_) {
        implementation = implementation_;
    }

    fallback() external payable {
        address code = implementation;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), code, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }
}

/// A factory whose deployment runs a rule, then creates a RuleAccountProxy with CREATE2.
contract RuleFactory is RuleRunner {
    /// The code every account of this factory runs, behind its proxy.
    RuleAccount public immutable accountImplementation;

    constructor(address entryPoint_, RuleTarget target_) RuleRunner(entryPoint_, target_) {
        accountImplementation = new RuleAccount(entryPoint_, target_);
    }

    function createAccount(uint256 salt, string calldata rule) external returns (address account) {
        account = getAddress(salt);
        run(rule, account);
        if (account.code.length == 0) new RuleAccountProxy{salt: bytes32(salt)}(address(accountImplementation));
    }

    function getAddress(uint256 salt) public view returns (address) {
        bytes memory creationCode = abi.encodePacked(type(RuleAccountProxy).creationCode, abi.encode(accountImplementation));
        bytes32 hash = keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), keccak256(creationCode)));
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
