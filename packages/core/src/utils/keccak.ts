import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type Hex, keccak256 as viemKeccak256 } from "viem";

/**
 * keccak256 of bytes, through the `keccak` package's prebuilt native binding (its `KeccakState`,
 * without the package's stream wrapper, which costs more than the hash): about ten times
 * faster than JavaScript on a user operation's fields, and operation hashes are taken at admission,
 * in lookups and by the simulated chain for every operation. Where the binding does not load,
 * viem's keccak256 (noble), with the same results.
 */
export const keccak256Bytes: (data: Uint8Array) => Uint8Array = fromBinding(loadBinding()) ?? ((data) => viemKeccak256(data, "bytes"));

/** keccak256 of bytes, as `0x`-prefixed hex. */
export function keccak256(data: Uint8Array): Hex {
  const hash = keccak256Bytes(data);
  return `0x${Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("hex")}`;
}

/** keccak256 of `0x`-prefixed hex (a serialized transaction, say), as `0x`-prefixed hex. */
export function keccak256Hex(data: Hex): Hex {
  return keccak256(Buffer.from(data.slice(2), "hex"));
}

/** The binding's `KeccakState`: initialise for keccak256 (rate 1088, capacity 512), absorb, squeeze 32 bytes. */
interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  squeeze(length: number): Buffer;
}

function loadBinding(): (new () => KeccakState) | undefined {
  try {
    const require = createRequire(import.meta.url);
    const directory = dirname(require.resolve("keccak/package.json"));
    const binding = createRequire(join(directory, "package.json"))("node-gyp-build")(directory) as unknown;
    return typeof binding === "function" ? (binding as new () => KeccakState) : undefined;
  } catch {
    return undefined;
  }
}

/** One state, reused: each hash runs to completion before the next starts (no await in between). */
function fromBinding(State: (new () => KeccakState) | undefined): ((data: Uint8Array) => Uint8Array) | undefined {
  if (!State) return undefined;
  const state = new State();
  return (data) => {
    state.initialize(1088, 512);
    state.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return state.squeeze(32);
  };
}
