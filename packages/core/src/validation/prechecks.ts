import { GasLimitTooHighError, InvalidParamsError, PriorityFeeAboveMaxFeeError } from "../errors/errors.ts";
import type { UserOperation } from "../userop/types.ts";
import { isUserOperationV06 } from "../userop/types.ts";
import { checkUserOperationSize } from "./size-limits.ts";

export interface PrecheckLimits {
  validationGasLimit: bigint;
  /** LIM-010: most bytes of the ABI-encoded operation. */
  maxUserOperationBytes: number;
}

/**
 * Cheap checks before any simulation (stage 1 of validation): no chain access, so a malformed or
 * hopeless operation costs nothing. Throws a `FieldError` naming the field.
 */
export function precheckUserOperation(op: UserOperation, limits: PrecheckLimits): void {
  checkUserOperationSize(op, limits.maxUserOperationBytes);
  if (op.maxPriorityFeePerGas > op.maxFeePerGas) throw new PriorityFeeAboveMaxFeeError(op.maxPriorityFeePerGas, op.maxFeePerGas);
  if (op.verificationGasLimit > limits.validationGasLimit) {
    throw new GasLimitTooHighError("verificationGasLimit", op.verificationGasLimit, limits.validationGasLimit);
  }
  if (op.signature === "0x") throw new InvalidParamsError("signature", "is empty");
  if (!isUserOperationV06(op) && op.paymaster) {
    const paymasterGas = op.paymasterVerificationGasLimit ?? 0n;
    if (paymasterGas > limits.validationGasLimit) {
      throw new GasLimitTooHighError("paymasterVerificationGasLimit", paymasterGas, limits.validationGasLimit);
    }
  }
}
