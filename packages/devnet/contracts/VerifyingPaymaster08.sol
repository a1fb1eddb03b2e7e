// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./VerifyingPaymasterBase.sol";

/// The verifying paymaster (see VerifyingPaymasterBase.sol) for EntryPoint v0.8.
contract VerifyingPaymaster is VerifyingPaymasterBase {
    constructor(IEntryPoint _entryPoint, address _verifyingSigner, address _owner)
        BasePaymaster(_entryPoint)
        VerifyingPaymasterBase(_verifyingSigner)
    {
        _transferOwnership(_owner);
    }
}
