// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./Delegate.sol";

interface IGasLimitSearch {
    function searchPostOp_gls(bytes calldata postOpCall) external returns (bool ok);
}

/**
 * Stands in for a paymaster while its postOp gas is estimated. Never deployed: the bundler
 * places this code at the paymaster's address with a state override and the paymaster's own code
 * at IMPLEMENTATION, to which everything is delegated (so the paymaster runs on its own storage).
 * When the EntryPoint (running GasLimitSearch) calls postOp, it first has GasLimitSearch search
 * the gas postOp needs, with probes that reach the real postOp, and then runs postOp for real;
 * if postOp fails even with all the gas there is, it returns without running it, so the outcome
 * survives for the bundler to read.
 */
contract PostOpProbe {
    /// Where the bundler places the paymaster's code.
    address internal constant IMPLEMENTATION = 0x4337000000000000000000000000000000009057;
    /// Storage flag (inside the reverting estimation frame): set while probes run, so that their postOp calls reach the real code.
    bytes32 internal constant FORWARD_SLOT = keccak256("bundlekit.PostOpProbe.forward");
    bytes4 internal constant POST_OP_V06 = bytes4(keccak256("postOp(uint8,bytes,uint256)"));
    bytes4 internal constant POST_OP_V07 = bytes4(keccak256("postOp(uint8,bytes,uint256,uint256)"));

    fallback() external payable {
        bytes32 slot = FORWARD_SLOT;
        bool forward;
        assembly ("memory-safe") {
            forward := sload(slot)
        }
        if (!forward && (msg.sig == POST_OP_V06 || msg.sig == POST_OP_V07)) {
            assembly ("memory-safe") {
                sstore(slot, 1)
            }
            bool ok = IGasLimitSearch(msg.sender).searchPostOp_gls(msg.data);
            assembly ("memory-safe") {
                sstore(slot, 0)
            }
            if (!ok) return;
        }
        delegateCall(IMPLEMENTATION);
    }
}
