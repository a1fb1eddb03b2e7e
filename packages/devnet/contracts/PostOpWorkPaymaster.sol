// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "./PostOpWork.sol";

/// PostOpWork (see PostOpWork.sol) for EntryPoint v0.7 and v0.8.
contract PostOpWorkPaymaster is PostOpWork {
    constructor(IEntryPoint _entryPoint, address _owner) BasePaymaster(_entryPoint) {
        _transferOwnership(_owner);
    }
}
