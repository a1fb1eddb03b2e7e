// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./VerifyingPaymasterBase.sol";

/**
 * The verifying paymaster (see VerifyingPaymasterBase.sol) for EntryPoint v0.9. Its signature may
 * also travel as v0.9's paymasterSignature (the suffix after paymasterData that the userOpHash
 * leaves out), so the paymaster can sign after the account has.
 */
contract VerifyingPaymaster is VerifyingPaymasterBase {
    constructor(IEntryPoint _entryPoint, address _verifyingSigner, address _owner)
        BasePaymaster(_entryPoint, _owner)
        VerifyingPaymasterBase(_verifyingSigner)
    {}

    /// The validity range, and the signature: the paymasterSignature suffix if there is one, else what follows the range.
    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public pure override returns (uint48 validUntil, uint48 validAfter, bytes calldata signature)
    {
        (validUntil, validAfter) = abi.decode(paymasterAndData[VALID_TIMESTAMP_OFFSET:SIGNATURE_OFFSET], (uint48, uint48));
        signature = UserOperationLib.getPaymasterSignature(paymasterAndData);
        if (signature.length == 0) signature = paymasterAndData[SIGNATURE_OFFSET:];
    }
}
