import { GasPriceTooLowError } from "../errors/errors.ts";
import type { UserOperation } from "../userop/types.ts";
import type { GasPrice } from "./fee-oracle.ts";

/**
 * `enforceGasPrice`: an operation's `maxPriorityFeePerGas` and `maxFeePerGas` must each be at
 * least the fee oracle's suggestion less `thresholdPercent` percent, so the pool holds no
 * operation that would not pay its way into a bundle soon. Throws `GasPriceTooLowError` naming
 * the field and the required minimum.
 */
export function enforceGasPrice(
  op: UserOperation,
  suggestion: GasPrice,
  thresholdPercent: number,
): void {
  for (const field of ["maxPriorityFeePerGas", "maxFeePerGas"] as const) {
    const required = (suggestion[field] * BigInt(100 - thresholdPercent)) / 100n;
    if (op[field] < required) {
      throw new GasPriceTooLowError(
        field,
        op[field],
        required,
        suggestion[field],
        thresholdPercent,
      );
    }
  }
}
