import { isUserOperationV06, paymasterOf, type UserOperation } from "../userop/types.ts";

/**
 * Gas an operation can take in `handleOps`, from its own limits: what bundles are sized by, and
 * the gas limit of bundles sent unsimulated. The EntryPoint checks that gas is left before it
 * spends it: v0.6 reserves the verification limit again (for `postOp`) before execution, v0.7+
 * the post-op limit plus 10,000, and every call with a gas limit may pass on only 63/64 of what
 * is left.
 */
export function bundleGasOf(op: UserOperation): bigint {
  if (isUserOperationV06(op)) {
    // Prefund counts the verification limit three times with a paymaster (validation, postOp, postOp retry).
    const verification = op.verificationGasLimit * (paymasterOf(op) ? 3n : 1n);
    return ((op.preVerificationGas + verification + op.verificationGasLimit + op.callGasLimit + 5_000n) * 64n) / 63n;
  }
  const paymaster = (op.paymasterVerificationGasLimit ?? 0n) + (op.paymasterPostOpGasLimit ?? 0n);
  return ((op.preVerificationGas + op.verificationGasLimit + paymaster + op.callGasLimit + 10_000n) * 64n) / 63n;
}

/** What the node adds to a bundle transaction besides its operations: the base cost and the `handleOps` frame. */
const bundleOverhead = 50_000n;

/**
 * The most operation gas (`bundleGasOf`) one bundle may hold on a chain whose blocks hold
 * `blockGasLimit`: the bundle transaction, with `gasLimitMarkupPercent` on top, must fit
 * a block.
 */
export function defaultMaxBundleGas(blockGasLimit: bigint, gasLimitMarkupPercent: number): bigint {
  return (blockGasLimit * 100n) / (100n + BigInt(gasLimitMarkupPercent)) - bundleOverhead;
}
