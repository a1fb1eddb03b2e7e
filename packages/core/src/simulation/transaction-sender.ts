import { createRequire } from "node:module";
import type * as Secp256k1 from "secp256k1";
import type { Address, parseTransaction } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { keccak256Bytes, keccak256Hex } from "../utils/keccak.ts";
import { serializeTransaction } from "../utils/serialize-transaction.ts";

/**
 * The sender of a signed transaction, recovered as a node does: the hash of the unsigned
 * transaction (core's serializer, equal to viem's) through the native keccak, the key through libsecp256k1 (the
 * `secp256k1` package's prebuilt binding). `undefined` where the binding does not load or the
 * transaction carries no signature: the caller then asks viem's `recoverTransactionAddress`, which
 * gives the same address more slowly.
 */
export const recoverSenderNatively: (
  parsed: ReturnType<typeof parseTransaction>,
) => Address | undefined = fromBinding(loadBinding()) ?? (() => undefined);

function loadBinding(): typeof Secp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as typeof Secp256k1;
  } catch {
    return undefined;
  }
}

function fromBinding(secp256k1: typeof Secp256k1 | undefined) {
  if (!secp256k1) return undefined;
  return (parsed: ReturnType<typeof parseTransaction>): Address | undefined => {
    const { r, s, v: _v, yParity, ...unsigned } = parsed;
    if (r === undefined || s === undefined || yParity === undefined) return undefined;
    const signature = Buffer.from(
      `${r.slice(2).padStart(64, "0")}${s.slice(2).padStart(64, "0")}`,
      "hex",
    );
    const digest = Buffer.from(keccak256Hex(serializeTransaction(unsigned)).slice(2), "hex");
    const key = secp256k1.ecdsaRecover(signature, yParity, digest, false).subarray(1);
    const hash = keccak256Bytes(key);
    return getAddress(`0x${Buffer.from(hash.buffer, hash.byteOffset + 12, 20).toString("hex")}`);
  };
}
