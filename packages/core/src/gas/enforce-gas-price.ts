import { InvalidParamsError } from "../errors/errors.ts";
import type { UserOperation } from "../userop/types.ts";
import type { GasPrice } from "./fee-oracle.ts";

/**
 * `enforceGasPrice`: an operation's `maxPriorityFeePerGas` and `maxFeePerGas` must each be at
 * least the fee oracle's suggestion less `thresholdPercent` percent, so the pool holds no
 * operation that would not pay its way into a bundle soon. Throws `InvalidParamsError` (-32602)
 * naming the field and the required minimum.
 */
export function enforceGasPrice(
  op: UserOperation,
  suggestion: GasPrice,
  thresholdPercent: number,
): void {
  for (const field of ["maxPriorityFeePerGas", "maxFeePerGas"] as const) {
    const required = (suggestion[field] * BigInt(100 - thresholdPercent)) / 100n;
    if (op[field] < required) {
      throw new InvalidParamsError(
        field,
        `${op[field]} is below the required minimum of ${required} wei (the network's suggestion ${suggestion[field]} less enforceGasPriceThreshold ${thresholdPercent}%)`,
      );
    }
  }
}
