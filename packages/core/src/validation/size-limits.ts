import { encodeAbiParameters, type Hex, parseAbiParameters, size } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { RuleViolationError, UserOperationTooLargeError } from "../errors/errors.ts";
import { measureUserOperation } from "../userop/abi-measure.ts";
import { toEntryPointStruct } from "../userop/pack.ts";
import { isUserOperationV06, paymasterOf, type UserOperation } from "../userop/types.ts";

/** ERC-7562's size limits, in bytes: the defaults of the matching settings. */
export const erc7562Limits = {
  /** MAX_USEROP_SIZE (LIM-010). */
  maxUserOperationSize: 8192,
  /** MAX_CONTEXT_SIZE (LIM-020). */
  maxPaymasterContextSize: 2048,
  /** MAX_BUNDLE_SIZE (LIM-040). */
  maxBundleCalldataSize: 262_144,
  /** MAX_BUNDLE_CONTEXT_SIZE (LIM-050). */
  maxBundleContextSize: 65_536,
} as const;

const userOperationV06Struct = parseAbiParameters(
  "(address sender, uint256 nonce, bytes initCode, bytes callData, uint256 callGasLimit, uint256 verificationGasLimit, uint256 preVerificationGas, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas, bytes paymasterAndData, bytes signature)",
);
const packedUserOperationStruct = parseAbiParameters(
  "(address sender, uint256 nonce, bytes initCode, bytes callData, bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees, bytes paymasterAndData, bytes signature)",
);

/**
 * Bytes of the operation ABI-encoded as its EntryPoint takes it: the v0.6 `UserOperation`
 * struct, or the v0.7+ `PackedUserOperation`. The struct alone, without the offset word that
 * points at it.
 */
export function userOperationSize(op: UserOperation): number {
  return measureUserOperation(op).size;
}

/** `userOperationSize` by encoding the struct: what the measured size must equal (kept for the tests). */
export function encodedUserOperationSize(op: UserOperation): number {
  const encoded = isUserOperationV06(op)
    ? encodeAbiParameters(userOperationV06Struct, [op])
    : encodeAbiParameters(packedUserOperationStruct, [toEntryPointStruct(op)]);
  return size(encoded) - 32;
}

/** LIM-010: an operation above `maxUserOperationSize` bytes is refused (`UserOperationTooLargeError`) before simulation. */
export function checkUserOperationSize(op: UserOperation, maxUserOperationSize: number): void {
  const bytes = userOperationSize(op);
  if (bytes > maxUserOperationSize) throw new UserOperationTooLargeError(bytes, maxUserOperationSize);
}

/**
 * LIM-020: a paymaster whose validation returns more than `maxPaymasterContextSize` bytes of
 * `context` is refused (`RuleViolationError`), naming the paymaster.
 */
export function checkPaymasterContextSize(op: UserOperation, paymasterContext: Hex, maxPaymasterContextSize: number): void {
  const paymaster = paymasterOf(op);
  const bytes = size(paymasterContext);
  if (!paymaster || bytes <= maxPaymasterContextSize) return;
  throw new RuleViolationError([
    { rule: "LIM-020", entity: "paymaster", address: getAddress(paymaster), subject: `returns a context of ${bytes} bytes, above ${maxPaymasterContextSize}` },
  ]);
}

/** Bytes of `handleOps(ops, beneficiary)` calldata besides the operations: selector, two head words, the array's length. */
export const handleOpsCalldataOverhead = 4 + 3 * 32;

/** Bytes an operation adds to `handleOps` calldata: its struct and the array's word pointing at it. */
export function bundledOperationSize(op: UserOperation): number {
  return userOperationSize(op) + 32;
}

