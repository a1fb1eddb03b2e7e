import { type Hex, keccak256 as viemKeccak256 } from "viem";
import { createWasmKeccak, type WasmKeccak } from "./keccak-wasm.ts";

/**
 * keccak256 in WebAssembly (`keccak-wasm.ts`): one call per hash and no native buffer. On an
 * operation's fields about three times as fast as the `keccak` package's native binding (three
 * calls and a new buffer a hash), which the engine used before, and ten times viem's JavaScript;
 * as fast as the binding on a bundle's 30 KB (`pnpm bench:keccak`). Operation hashes are taken at
 * admission, in lookups and by the simulated chain for every operation, and addresses checksummed
 * with it. Where WebAssembly cannot run, viem's keccak256 (noble), with the same results.
 */
const wasm: WasmKeccak | undefined = (() => {
  try {
    return createWasmKeccak();
  } catch {
    return undefined;
  }
})();

/** keccak256 of bytes: 32 bytes that the next hash may overwrite. */
const digestOf: (data: Uint8Array) => Uint8Array = wasm
  ? (data) => {
      wasm.input(data.length).set(data);
      return wasm.digest(data.length);
    }
  : (data) => viemKeccak256(data, "bytes");

/**
 * Inputs this long are remembered with their hash: a bundle transaction and its signing payload,
 * tens of kilobytes, up to the 128 KiB a node's pool takes in one transaction (go-ethereum's
 * `txMaxSize`), so that what is kept stays bounded.
 */
const rememberedLength = { min: 2048, max: 131_072 };

/** A large input hashed lately: a copy of its bytes (`length` of them) and its hash. */
interface Remembered {
  bytes: Uint8Array;
  length: number;
  hash: Uint8Array;
}

/** How many large inputs are remembered: two transactions, each with its signing payload. */
const rememberedInputs = 4;

/**
 * The last `rememberedInputs` large inputs hashed, with their hashes. A bundle transaction is
 * hashed twice where it is signed (its signing payload, then the signed bytes) and again, the same
 * bytes, where it is read back from them (a node, the simulated chain): the second time, comparing
 * the bytes costs a hundredth of hashing them. Compared in full, so no input is given the hash of
 * other bytes.
 */
const remembered: Remembered[] = [];
let replaced = 0;

function hashOf(data: Uint8Array): Uint8Array {
  if (data.length < rememberedLength.min || data.length > rememberedLength.max) return digestOf(data);
  for (const entry of remembered) {
    if (entry.length === data.length && Buffer.compare(entry.bytes.subarray(0, entry.length), data) === 0) return entry.hash;
  }
  const hash = digestOf(data);
  if (remembered.length < rememberedInputs) remembered.push({ bytes: new Uint8Array(data.length), length: 0, hash: new Uint8Array(32) });
  const entry = remembered[replaced]!;
  replaced = (replaced + 1) % rememberedInputs;
  if (entry.bytes.length < data.length) entry.bytes = new Uint8Array(data.length);
  entry.bytes.set(data);
  entry.length = data.length;
  entry.hash.set(hash);
  return entry.hash;
}

/** keccak256 of bytes, in a new array. */
export const keccak256Bytes = (data: Uint8Array): Uint8Array => hashOf(data).slice();

/** keccak256 of bytes, written into `target` at `at`: no array of its own. */
export const keccak256Into = (data: Uint8Array, target: Uint8Array, at: number): void => target.set(hashOf(data), at);

/** keccak256 of bytes, as `0x`-prefixed hex. */
export function keccak256(data: Uint8Array): Hex {
  const hash = hashOf(data);
  return `0x${Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("hex")}`;
}

/** keccak256 of `0x`-prefixed hex (a serialized transaction, say), as `0x`-prefixed hex. */
export function keccak256Hex(data: Hex): Hex {
  if (!wasm) return keccak256(Buffer.from(data.slice(2), "hex"));
  const length = (data.length - 2) >> 1;
  const input = wasm.input(length);
  const written = Buffer.from(input.buffer, input.byteOffset, length).write(data.slice(2), "hex");
  const hash = wasm.digest(written);
  return `0x${Buffer.from(hash.buffer, hash.byteOffset, 32).toString("hex")}`;
}
