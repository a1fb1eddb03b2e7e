import { decodeFunctionData, type Hex } from "viem";
import { fromPackedUserOperation, type PackedUserOperation } from "./pack.ts";
import type { UserOperation } from "./types.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";

/**
 * The user operations a bundle transaction carries, read back from its `handleOps` calldata (hex,
 * or the bytes of a transaction read as a node reads it) in domain form. Empty when the input is
 * not a `handleOps` call of this EntryPoint.
 */
export function decodeHandleOps(entryPoint: EntryPoint, input: Hex | Uint8Array): UserOperation[] {
  const packed = entryPoint.version === "0.6" ? undefined : readPackedHandleOps(typeof input === "string" ? bytesOfHex(input) : input);
  if (packed) return packed.map((op) => fromPackedUserOperation(op, entryPoint.version));
  return decodeHandleOpsWithAbi(entryPoint, typeof input === "string" ? input : hexOf(input, 0, input.length));
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
const packedHandleOpsSelector = 0x765e827f;

/** `0x`-prefixed hex as bytes; undefined unless it is all even hex (`Buffer.from` stops at the first pair that is not). */
function bytesOfHex(input: Hex): Buffer | undefined {
  if (!input.startsWith("0x") || input.length % 2 !== 0) return undefined;
  const bytes = Buffer.from(input.slice(2), "hex");
  return bytes.length * 2 === input.length - 2 ? bytes : undefined;
}

/** Bytes `start` to `end` of `bytes` as `0x`-prefixed hex. */
function hexOf(bytes: Uint8Array, start: number, end: number): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex", start, end)}`;
}

/**
 * The packed operations of v0.7+ `handleOps` calldata, read by hand from its bytes (the simulated
 * chain reads every bundle it mines, about ten times faster than the generic decoder, and
 * without writing the calldata as hex). `undefined` for anything not plainly that call, in
 * bounds: the ABI decoder then answers as before.
 */
function readPackedHandleOps(input: Uint8Array | undefined): PackedUserOperation[] | undefined {
  if (!input || input.length < 4) return undefined;
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  if (view.getUint32(0) !== packedHandleOpsSelector) return undefined;
  /** The arguments' length, after the selector; `at` below counts from their start. */
  const bytes = input.length - 4;
  const inBounds = (at: number) => {
    if (!(at >= 0 && at + 32 <= bytes)) throw new RangeError("out of bounds");
    return 4 + at;
  };
  const word = (at: number): Hex => {
    const start = inBounds(at);
    return hexOf(input, start, start + 32);
  };
  /** A uint256; read as 64 bits where its first 24 bytes are zero, as most are (gas, small nonces). */
  const uint = (at: number) => {
    const start = inBounds(at);
    for (let i = start; i < start + 24; i += 4) if (view.getUint32(i) !== 0) return BigInt(word(at));
    return view.getBigUint64(start + 24);
  };
  /** A word read as an offset or length: within the arguments, so its first 28 bytes are zero. */
  const offset = (at: number) => {
    const start = inBounds(at);
    for (let i = start; i < start + 28; i += 4) if (view.getUint32(i) !== 0) throw new RangeError("out of bounds");
    const value = view.getUint32(start + 28);
    if (value > bytes) throw new RangeError("out of bounds");
    return value;
  };
  const dynamicBytes = (at: number): Hex => {
    const length = offset(at);
    if (at + 32 + length > bytes) throw new RangeError("out of bounds");
    return hexOf(input, 4 + at + 32, 4 + at + 32 + length);
  };
  try {
    word(32); // the beneficiary
    const array = offset(0);
    const count = offset(array);
    const elements = array + 32;
    const ops: PackedUserOperation[] = [];
    for (let i = 0; i < count; i++) {
      const tuple = elements + offset(elements + 32 * i);
      const sender = inBounds(tuple) + 12;
      ops.push({
        sender: hexOf(input, sender, sender + 20),
        nonce: uint(tuple + 32),
        initCode: dynamicBytes(tuple + offset(tuple + 64)),
        callData: dynamicBytes(tuple + offset(tuple + 96)),
        accountGasLimits: word(tuple + 128),
        preVerificationGas: uint(tuple + 160),
        gasFees: word(tuple + 192),
        paymasterAndData: dynamicBytes(tuple + offset(tuple + 224)),
        signature: dynamicBytes(tuple + offset(tuple + 256)),
      });
    }
    return ops;
  } catch {
    return undefined;
  }
}
