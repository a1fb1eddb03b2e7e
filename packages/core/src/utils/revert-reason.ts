import { decodeErrorResult, type Hex } from "viem";

/**
 * What a revert says: the message of an `Error(string)`, `Panic(<code>)` for a panic, undefined
 * for anything else (a custom error's raw data is all there is).
 */
export function revertReason(data: Hex): string | undefined {
  try {
    const { errorName, args } = decodeErrorResult({ abi: [], data });
    return errorName === "Error" ? String(args?.[0]) : `${errorName}(${(args ?? []).map((a) => (typeof a === "bigint" ? `0x${a.toString(16)}` : String(a))).join(", ")})`;
  } catch {
    return undefined;
  }
}
