// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./PostOpWork.sol";

/// PostOpWork (see PostOpWork.sol) for EntryPoint v0.9, whose BasePaymaster takes its owner.
contract PostOpWorkPaymaster is PostOpWork {
    constructor(IEntryPoint _entryPoint, address _owner) BasePaymaster(_entryPoint, _owner) {}
}
