import { createRequire } from "node:module";
import type * as Secp256k1 from "secp256k1";
import {
  type Address,
  getAddress,
  type Hex,
  type parseTransaction,
  recoverTransactionAddress,
  serializeTransaction,
  type TransactionSerialized,
} from "viem";
import { keccak256Bytes, keccak256Hex } from "../utils/keccak.ts";

/**
 * The sender of a signed transaction, recovered as a node does: the hash of the unsigned
 * transaction through the native keccak, the key through libsecp256k1 (the `secp256k1` package's
 * prebuilt binding). Where the binding does not load, viem's `recoverTransactionAddress`, with the
 * same result.
 */
export const recoverTransactionSender: (
  serialized: Hex,
  parsed: ReturnType<typeof parseTransaction>,
) => Promise<Address> =
  fromBinding(loadBinding()) ??
  ((serialized) =>
    recoverTransactionAddress({ serializedTransaction: serialized as TransactionSerialized }));

function loadBinding(): typeof Secp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as typeof Secp256k1;
  } catch {
    return undefined;
  }
}

function fromBinding(secp256k1: typeof Secp256k1 | undefined) {
  if (!secp256k1) return undefined;
  return async (serialized: Hex, parsed: ReturnType<typeof parseTransaction>): Promise<Address> => {
    const { r, s, v: _v, yParity, ...unsigned } = parsed;
    // Legacy transactions (parity folded into `v` with the chain id) go the long way.
    if (r === undefined || s === undefined || yParity === undefined)
      return recoverTransactionAddress({
        serializedTransaction: serialized as TransactionSerialized,
      });
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
