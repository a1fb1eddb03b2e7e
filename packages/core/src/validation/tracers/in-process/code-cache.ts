import { hexToBytes } from "@ethereumjs/util";
import { type Hex, keccak256 } from "viem";

/** A contract's code as the EVM takes it, with its hash. */
export interface CachedCode {
  bytes: Uint8Array;
  hash: Hex;
}

/** Most distinct codes kept; the same few contracts (EntryPoint, factories, accounts) run in every validation. */
const capacity = 512;
const cache = new Map<Hex, CachedCode>();

/**
 * The code `hex` decoded and hashed once per process. The same bytes object comes back every
 * time, so work the EVM keys by code (jump-destination analysis) is reused across validations.
 */
export function cachedCode(hex: Hex): CachedCode {
  let entry = cache.get(hex);
  if (!entry) {
    if (cache.size >= capacity) cache.clear();
    const bytes = hexToBytes(hex);
    entry = { bytes, hash: keccak256(bytes) };
    cache.set(hex, entry);
  }
  return entry;
}

/** What the EVM's jump-destination analysis returns for a code (it holds that EVM's opcode handlers). */
type JumpAnalysis = unknown;
/** Per EVM (each has its own handlers), per code object. */
const analyses = new WeakMap<object, WeakMap<Uint8Array, JumpAnalysis>>();
const patched = new WeakSet<object>();

/**
 * Cache `@ethereumjs/evm`'s per-frame jump-destination analysis by code object: the interpreter
 * re-analyses the whole code of every frame it runs (a fifth of a validation's time for the
 * EntryPoint's 21 KB). Patches the (unexported) interpreter's prototype once; the version is
 * pinned in package.json.
 */
export function cacheJumpAnalysis(interpreter: object) {
  const prototype = Object.getPrototypeOf(interpreter) as { _getValidJumpDestinations?: (code: Uint8Array) => JumpAnalysis };
  if (patched.has(prototype) || typeof prototype._getValidJumpDestinations !== "function") return;
  const analyse = prototype._getValidJumpDestinations;
  prototype._getValidJumpDestinations = function cached(this: { _evm: object }, code: Uint8Array) {
    let byCode = analyses.get(this._evm);
    if (!byCode) {
      byCode = new WeakMap();
      analyses.set(this._evm, byCode);
    }
    let analysis = byCode.get(code);
    if (!analysis) {
      analysis = analyse.call(this, code);
      byCode.set(code, analysis);
    }
    return analysis;
  };
  patched.add(prototype);
}
