import { decodeFunctionData, type Hex } from "viem";
import { fromPackedUserOperation, type PackedUserOperation } from "./pack.ts";
import type { UserOperation } from "./types.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";

/**
 * The user operations a bundle transaction carries, read back from its `handleOps` calldata in
 * domain form. Empty when the input is not a `handleOps` call of this EntryPoint.
 */
export function decodeHandleOps(entryPoint: EntryPoint, input: Hex): UserOperation[] {
  const packed = entryPoint.version === "0.6" ? undefined : readPackedHandleOps(input);
  if (packed) return packed.map((op) => fromPackedUserOperation(op, entryPoint.version));
  return decodeHandleOpsWithAbi(entryPoint, input);
}

/** `decodeHandleOps` through viem's ABI decoder: what the hand reading must equal, and the answer for anything it declines. */
export function decodeHandleOpsWithAbi(entryPoint: EntryPoint, input: Hex): UserOperation[] {
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

/** `handleOps(PackedUserOperation[],address)`, the same in v0.7, v0.8 and v0.9. */
const packedHandleOpsSelector = "0x765e827f";

/**
 * The packed operations of v0.7+ `handleOps` calldata, read by hand (the simulated chain reads
 * every bundle it estimates, about ten times faster than the generic decoder). `undefined` for
 * anything not plainly that call, in bounds and hex: the ABI decoder then answers as before.
 */
function readPackedHandleOps(input: Hex): PackedUserOperation[] | undefined {
  if (!input.startsWith(packedHandleOpsSelector) || input.length % 2 !== 0 || !/^0x[0-9a-fA-F]*$/.test(input)) return undefined;
  const bytes = (input.length - 10) / 2;
  /** The word at byte `at` of the arguments, as hex without `0x`. */
  const word = (at: number) => {
    if (!(at >= 0 && at + 32 <= bytes)) throw new RangeError("out of bounds");
    return input.slice(10 + at * 2, 74 + at * 2);
  };
  const uint = (at: number) => BigInt(`0x${word(at)}`);
  const offset = (at: number) => {
    const value = uint(at);
    if (value > BigInt(bytes)) throw new RangeError("out of bounds");
    return Number(value);
  };
  const dynamicBytes = (at: number): Hex => {
    const length = offset(at);
    if (at + 32 + length > bytes) throw new RangeError("out of bounds");
    return `0x${input.slice(10 + (at + 32) * 2, 10 + (at + 32 + length) * 2)}`;
  };
  try {
    word(32); // the beneficiary
    const array = offset(0);
    const count = offset(array);
    const elements = array + 32;
    const ops: PackedUserOperation[] = [];
    for (let i = 0; i < count; i++) {
      const tuple = elements + offset(elements + 32 * i);
      ops.push({
        sender: `0x${word(tuple).slice(24)}`,
        nonce: uint(tuple + 32),
        initCode: dynamicBytes(tuple + offset(tuple + 64)),
        callData: dynamicBytes(tuple + offset(tuple + 96)),
        accountGasLimits: `0x${word(tuple + 128)}`,
        preVerificationGas: uint(tuple + 160),
        gasFees: `0x${word(tuple + 192)}`,
        paymasterAndData: dynamicBytes(tuple + offset(tuple + 224)),
        signature: dynamicBytes(tuple + offset(tuple + 256)),
      });
    }
    return ops;
  } catch {
    return undefined;
  }
}
