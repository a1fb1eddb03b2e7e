import { type Address, zeroAddress } from "viem";
import type { ValidationData } from "../ports/validation-result.ts";

const maxUint48 = (1n << 48n) - 1n;

/** Split `validationData` = `validAfter(48) ‖ validUntil(48) ‖ aggregator(160)`. */
export function parseValidationData(validationData: bigint): ValidationData {
  const aggregatorBits = validationData & ((1n << 160n) - 1n);
  const validUntil = (validationData >> 160n) & maxUint48;
  const validAfter = validationData >> 208n;
  return {
    aggregator: aggregatorBits === 0n ? zeroAddress : (`0x${aggregatorBits.toString(16).padStart(40, "0")}` as Address),
    signatureFailed: aggregatorBits === 1n,
    validAfter,
    validUntil: validUntil === 0n ? maxUint48 : validUntil,
  };
}
