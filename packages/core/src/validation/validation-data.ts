import { type Address, zeroAddress } from "viem";
import type { EntryPointVersion } from "../entrypoint/version.ts";
import type { ValidationData } from "../ports/validation-result.ts";

const maxUint48 = (1n << 48n) - 1n;
/** v0.9: the top bit of both bounds marks a range of block numbers. */
const blockRangeFlag = 1n << 47n;

/**
 * Split `validationData` = `validAfter(48) ‖ validUntil(48) ‖ aggregator(160)`. From v0.9, bounds
 * that both exceed `0x800000000000` (after a zero `validUntil` became `2^48-1`, as the EntryPoint
 * reads them) are block numbers, given here without the flag and with `blockRange` set.
 */
export function parseValidationData(validationData: bigint, version?: EntryPointVersion): ValidationData {
  const aggregatorBits = validationData & ((1n << 160n) - 1n);
  const until = (validationData >> 160n) & maxUint48;
  const validAfter = validationData >> 208n;
  const validUntil = until === 0n ? maxUint48 : until;
  const blockRange = version === "0.9" && validAfter > blockRangeFlag && validUntil > blockRangeFlag;
  return {
    aggregator: aggregatorBits === 0n ? zeroAddress : (`0x${aggregatorBits.toString(16).padStart(40, "0")}` as Address),
    signatureFailed: aggregatorBits === 1n,
    ...(blockRange
      ? { validAfter: validAfter & (blockRangeFlag - 1n), validUntil: validUntil & (blockRangeFlag - 1n), blockRange }
      : { validAfter, validUntil }),
  };
}
