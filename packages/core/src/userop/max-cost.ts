import { isUserOperationV06, paymasterOf, type UserOperation } from "./types.ts";

/**
 * The most the EntryPoint can charge for `op`, in wei: every gas limit at its max fee (v0.6 with a
 * paymaster reserves verification gas three times, for validation and up to two postOp calls).
 * What a paymaster's deposit must cover for each operation it sponsors.
 */
export function maxCostOf(op: UserOperation): bigint {
  if (isUserOperationV06(op)) {
    const verificationMultiplier = paymasterOf(op) ? 3n : 1n;
    return (op.preVerificationGas + op.callGasLimit + op.verificationGasLimit * verificationMultiplier) * op.maxFeePerGas;
  }
  const paymasterGas = (op.paymasterVerificationGasLimit ?? 0n) + (op.paymasterPostOpGasLimit ?? 0n);
  return (op.preVerificationGas + op.callGasLimit + op.verificationGasLimit + paymasterGas) * op.maxFeePerGas;
}
