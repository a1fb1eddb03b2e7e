// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./Delegate.sol";

/**
 * Finds the gas limits an operation needs, in one eth_call. Never deployed: the bundler places
 * this code at the EntryPoint's address with a state override and the EntryPoint's own code (or
 * EntryPointSimulations) at IMPLEMENTATION, to which every other call is delegated. So the
 * EntryPoint runs as usual, on its own storage, and calls from here come from the EntryPoint.
 *
 * The call's gas is searched where the EntryPoint would execute the operation, so the state is
 * exactly the execution's (validated, prefund paid, nothing refunded yet).
 *
 * Each search probes one limit g: it runs the phase in a frame that always reverts (so no probe
 * changes the state, nor warms an address or slot, for the next) and bisects for the smallest g
 * at which the phase succeeds, to within 1/RESOLUTION of it.
 */
contract GasLimitSearch {
    /// Where the bundler places the EntryPoint's code.
    address internal constant IMPLEMENTATION = 0x4337000000000000000000000000000000005E4c;
    /// Storage slot, written only inside the estimation's eth_call: the outcome of the postOp search (see PostOpProbe).
    bytes32 internal constant POST_OP_SLOT = keccak256("bundlekit.GasLimitSearch.postOp");
    /// Storage slot, written only inside the estimation's eth_call: 0 to search a postOp's gas, else the gas to check it at.
    bytes32 internal constant POST_OP_GAS_SLOT = keccak256("bundlekit.GasLimitSearch.postOpGas");
    /// Storage slots of the call search: what to search (see simulate_gls), and what it found.
    bytes32 internal constant CALL_SEARCH_SLOT = keccak256("bundlekit.GasLimitSearch.callSearch");
    bytes32 internal constant CALL_RESULT_SLOT = keccak256("bundlekit.GasLimitSearch.callResult");
    bytes32 internal constant CALL_FAILURE_SLOT = keccak256("bundlekit.GasLimitSearch.callFailure");
    uint256 internal constant RESOLUTION = 256;
    /// Gas kept back in a search frame for its own work after a probe.
    uint256 internal constant RESERVE = 30_000;

    /// One gas limit to find inside an EntryPoint simulation's calldata.
    struct Simulation {
        /// Calldata of the EntryPoint simulation (e.g. simulateValidation) to delegate to IMPLEMENTATION.
        bytes data;
        /// Where, in `data`, the limit is written: byte offset and width (big-endian).
        uint256 offset;
        uint256 width;
        uint256 hi;
        /// A simulation that reverts with this selector succeeded (v0.6 reports results by reverting); 0: only a return succeeds.
        bytes4 okSelector;
        bytes4 okSelector2;
    }

    /// The outcome of one search: the smallest limit found, or the failure at the highest limit.
    struct Found {
        bool ok;
        uint256 gas;
        bytes failure;
    }

    /// Run several of this contract's functions one after the other; what each returned.
    function batch_gls(bytes[] calldata calls) external returns (bytes[] memory results) {
        results = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory result) = address(this).delegatecall(calls[i]);
            if (!success) _bubble(result);
            results[i] = result;
        }
    }

    /// Search one limit of an EntryPoint simulation; with `exact`, only check that `hi` succeeds.
    function searchSimulation_gls(Simulation calldata s, bool exact) external returns (Found memory) {
        return _searchSimulation(s, exact);
    }

    /**
     * Run `data` (simulateHandleOp) against the EntryPoint's code in an isolated frame: its
     * success and return (or revert) data.
     * - `callSearch` != 0: when the EntryPoint is about to execute the operation (its
     *   innerHandleOp self-call, whose selector is the top 4 bytes), search the call's gas
     *   instead, up to the low 128 bits (bit 128: only check that), and skip the execution; the
     *   outcome is for callResult_gls.
     * - A postOp met on the way is searched (see searchPostOp_gls), or with `postOpGas` > 0
     *   only checked at that gas.
     */
    function simulate_gls(bytes calldata data, uint256 postOpGas, uint256 callSearch) external returns (bool success, bytes memory result) {
        _store(POST_OP_GAS_SLOT, postOpGas);
        _store(CALL_SEARCH_SLOT, callSearch);
        return _isolated(abi.encodeCall(this.isolatedDelegate_gls, (data)));
    }

    /// The call search's outcome in this transaction (see simulate_gls).
    function callResult_gls() external view returns (Found memory) {
        uint256 packed = _load(CALL_RESULT_SLOT);
        return Found(packed & 1 == 1, packed >> 1, _loadBytes(CALL_FAILURE_SLOT));
    }

    /// Called by PostOpProbe in place of the paymaster's postOp: search its gas, keep the outcome for postOpResult_gls.
    function searchPostOp_gls(bytes calldata postOpCall) external returns (bool ok) {
        uint256 exactGas = _load(POST_OP_GAS_SLOT);
        Found memory result = _searchCall(msg.sender, postOpCall, exactGas > 0 ? exactGas : type(uint256).max, exactGas > 0);
        _store(POST_OP_SLOT, (result.gas << 2) | (result.ok ? 3 : 1));
        return result.ok;
    }

    /// The postOp search's outcome in this transaction: whether postOp ran, whether it can succeed, and its gas.
    function postOpResult_gls() external view returns (bool called, bool ok, uint256 gas) {
        uint256 packed = _load(POST_OP_SLOT);
        return (packed & 1 == 1, packed & 2 == 2, packed >> 2);
    }

    /// Probe frame: delegate `data` to the EntryPoint's code, then revert with (success, result).
    function isolatedDelegate_gls(bytes calldata data) external {
        require(msg.sender == address(this));
        (bool success, bytes memory result) = IMPLEMENTATION.delegatecall(data);
        _revertWith(success, result, 0);
    }

    /// Probe frame: call `target` with exactly `gasLimit`, then revert with (success, result, gas used).
    function isolatedCall_gls(address target, bytes calldata data, uint256 gasLimit) external {
        require(msg.sender == address(this));
        uint256 before = gasleft();
        (bool success, bytes memory result) = target.call{gas: gasLimit}(data);
        _revertWith(success, result, before - gasleft());
    }

    function _searchSimulation(Simulation calldata s, bool exact) internal returns (Found memory) {
        bytes memory data = s.data;
        uint256 hi = s.hi;
        _patch(data, s.offset, s.width, hi);
        (bool ok, bytes memory result, uint256 used) = _probeSimulation(data, s);
        if (!ok) return Found(false, 0, result);
        if (exact) return Found(true, hi, "");
        // The limit is rarely far above what the simulation used: try just above that first.
        uint256 guess = used + used / 4 + 20_000;
        uint256 lo = 0;
        if (guess < hi) {
            _patch(data, s.offset, s.width, guess);
            (ok,,) = _probeSimulation(data, s);
            if (ok) hi = guess;
            else lo = guess;
        }
        while ((hi - lo) * RESOLUTION > hi) {
            uint256 mid = (lo + hi) / 2;
            _patch(data, s.offset, s.width, mid);
            (ok,,) = _probeSimulation(data, s);
            if (ok) hi = mid;
            else lo = mid;
        }
        return Found(true, hi, "");
    }

    function _probeSimulation(bytes memory data, Simulation calldata s) internal returns (bool ok, bytes memory result, uint256 used) {
        uint256 before = gasleft();
        bool success;
        (success, result) = _isolated(abi.encodeCall(this.isolatedDelegate_gls, (data)));
        used = before - gasleft();
        if (success) return (s.okSelector == bytes4(0), result, used);
        bytes4 selector = result.length >= 4 ? bytes4(result) : bytes4(0);
        ok = s.okSelector != bytes4(0) && (selector == s.okSelector || selector == s.okSelector2);
    }

    function _searchCall(address target, bytes memory data, uint256 hi, bool exact) internal returns (Found memory) {
        // A probe's frame passes on 63/64 of its gas, and keeps some for itself.
        uint256 available = gasleft() - RESERVE;
        available = available - available / 64 - RESERVE;
        available = available - available / 64;
        if (hi > available) hi = available;
        (bool ok, bytes memory result, uint256 used) = _probeCall(target, data, hi);
        if (!ok) return Found(false, 0, result);
        if (exact) return Found(true, hi, "");
        // A call needs about the gas it used (less the CALL's own cost); what it keeps back for inner calls comes on top.
        uint256 lo = used > 3_000 ? used - 3_000 : 0;
        uint256 guess = used + used / 16 + 5_000;
        if (guess < hi) {
            (ok,,) = _probeCall(target, data, guess);
            if (ok) hi = guess;
            else lo = guess;
        }
        while ((hi - lo) * RESOLUTION > hi) {
            uint256 mid = (lo + hi) / 2;
            (ok,,) = _probeCall(target, data, mid);
            if (ok) hi = mid;
            else lo = mid;
        }
        return Found(true, hi, "");
    }

    function _probeCall(address target, bytes memory data, uint256 gasLimit) internal returns (bool ok, bytes memory result, uint256 used) {
        bytes memory outcome;
        (ok, outcome) = _isolatedRaw(abi.encodeCall(this.isolatedCall_gls, (target, data, gasLimit)));
        (ok, result, used) = abi.decode(outcome, (bool, bytes, uint256));
    }

    function _isolated(bytes memory call) internal returns (bool success, bytes memory result) {
        bytes memory outcome;
        (, outcome) = _isolatedRaw(call);
        (success, result,) = abi.decode(outcome, (bool, bytes, uint256));
    }

    /// Call this contract with `call`, which reverts with abi.encode(success, result, used); the revert data.
    function _isolatedRaw(bytes memory call) internal returns (bool, bytes memory outcome) {
        (bool returned, bytes memory data) = address(this).call(call);
        require(!returned && data.length >= 96, "GasLimitSearch: probe frame did not report");
        return (true, data);
    }

    function _revertWith(bool success, bytes memory result, uint256 used) internal pure {
        _bubble(abi.encode(success, result, used));
    }

    function _bubble(bytes memory result) internal pure {
        assembly ("memory-safe") {
            revert(add(result, 32), mload(result))
        }
    }

    /// Write `value` as `width` big-endian bytes at `offset` of `data`.
    function _patch(bytes memory data, uint256 offset, uint256 width, uint256 value) internal pure {
        require(width > 0 && width <= 32 && offset + width <= data.length, "GasLimitSearch: bad patch");
        assembly ("memory-safe") {
            let ptr := add(add(data, 32), offset)
            let shift := mul(8, sub(32, width))
            let mask := not(shl(shift, sub(shl(mul(8, width), 1), 1)))
            mstore(ptr, or(and(mload(ptr), mask), shl(shift, value)))
        }
    }

    /// Everything else is the EntryPoint's (innerHandleOp self-calls, deposits, views), but for a call search.
    fallback() external payable {
        uint256 callSearch = _load(CALL_SEARCH_SLOT);
        if (callSearch != 0 && msg.sig == bytes4(bytes32(callSearch))) {
            // innerHandleOp(bytes callData, UserOpInfo opInfo, bytes context): opInfo starts with the sender.
            address sender = address(uint160(uint256(bytes32(msg.data[36:68]))));
            bytes memory callData = abi.decode(msg.data[4:], (bytes));
            Found memory found = callData.length == 0
                ? Found(true, 0, "")
                : _searchCall(sender, callData, uint128(callSearch), (callSearch >> 128) & 1 == 1);
            _store(CALL_RESULT_SLOT, (found.gas << 1) | (found.ok ? 1 : 0));
            _storeBytes(CALL_FAILURE_SLOT, found.failure);
            // As if the operation executed and cost nothing.
            assembly {
                mstore(0, 0)
                return(0, 32)
            }
        }
        delegateCall(IMPLEMENTATION);
    }

    function _load(bytes32 slot) internal view returns (uint256 value) {
        assembly ("memory-safe") {
            value := sload(slot)
        }
    }

    function _store(bytes32 slot, uint256 value) internal {
        assembly ("memory-safe") {
            sstore(slot, value)
        }
    }

    function _storeBytes(bytes32 slot, bytes memory value) internal {
        _store(slot, value.length);
        uint256 base = uint256(keccak256(abi.encode(slot)));
        for (uint256 i = 0; i * 32 < value.length; i++) {
            uint256 word;
            assembly ("memory-safe") {
                word := mload(add(add(value, 32), mul(i, 32)))
            }
            _store(bytes32(base + i), word);
        }
    }

    function _loadBytes(bytes32 slot) internal view returns (bytes memory value) {
        value = new bytes(_load(slot));
        uint256 base = uint256(keccak256(abi.encode(slot)));
        for (uint256 i = 0; i * 32 < value.length; i++) {
            uint256 word = _load(bytes32(base + i));
            assembly ("memory-safe") {
                mstore(add(add(value, 32), mul(i, 32)), word)
            }
        }
    }
}
