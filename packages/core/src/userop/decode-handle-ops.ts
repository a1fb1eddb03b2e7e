import { decodeFunctionData, type Hex } from "viem";
import { fromPackedUserOperation, type PackedUserOperation } from "./pack.ts";
import type { UserOperation } from "./types.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";

/**
 * The user operations a bundle transaction carries, read back from its `handleOps` calldata in
 * domain form. Empty when the input is not a `handleOps` call of this EntryPoint.
 */
export function decodeHandleOps(entryPoint: EntryPoint, input: Hex): UserOperation[] {
  let args: readonly unknown[] | undefined;
  try {
    ({ args } = decodeFunctionData({ abi: entryPoint.abi, data: input }));
  } catch {
    return [];
  }
  const ops = (args?.[0] ?? []) as readonly Record<string, unknown>[];
  if (!Array.isArray(ops)) return [];
  return ops.map((op) =>
    entryPoint.version === "0.6" ? ({ ...op } as UserOperation) : fromPackedUserOperation(op as PackedUserOperation, entryPoint.version),
  );
}
