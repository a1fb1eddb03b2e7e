import { type Abi, decodeErrorResult, type Hex } from "viem";

/** A decoded EntryPoint revert: which op failed and the `AAxx` reason. */
export interface EntryPointRevert {
  opIndex: number | undefined;
  reason: string;
  /** The inner revert data of `FailedOpWithRevert`, if any. */
  inner?: Hex | undefined;
}

/**
 * Decode `FailedOp`, `FailedOpWithRevert` or `Error(string)` from revert data, and v0.9's
 * `EntryPointSimulations` check `PaymasterNotDeployed(address)` as the `AA30` its EntryPoint's
 * `handleOps` would fail with; undefined for anything else.
 */
export function decodeEntryPointRevert(abi: Abi, data: Hex): EntryPointRevert | undefined {
  if (data.length < 10) return undefined;
  try {
    const decoded = decodeErrorResult({ abi, data });
    const args = (decoded.args ?? []) as readonly unknown[];
    switch (decoded.errorName) {
      case "FailedOp":
        return { opIndex: Number(args[0]), reason: String(args[1]) };
      case "FailedOpWithRevert":
        return { opIndex: Number(args[0]), reason: String(args[1]), inner: args[2] as Hex };
      case "Error":
        return { opIndex: undefined, reason: String(args[0]) };
      case "PaymasterNotDeployed":
        return { opIndex: undefined, reason: "AA30 paymaster not deployed" };
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}
