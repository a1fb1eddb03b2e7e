// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Hand the whole call to `implementation`'s code (on this contract's storage) and end with its outcome.
function delegateCall(address implementation) {
    assembly {
        calldatacopy(0, 0, calldatasize())
        let success := delegatecall(gas(), implementation, 0, calldatasize(), 0, 0)
        returndatacopy(0, 0, returndatasize())
        if success { return(0, returndatasize()) }
        revert(0, returndatasize())
    }
}
