import type { Hash, Hex } from "viem";
import type { SignedTransaction } from "../ports/relayer-signer.ts";
import { keccak256 } from "../utils/keccak.ts";

/**
 * A `SignedTransaction` from the signed transaction's bytes, hashed here unless its `hash` is
 * given; its hex is written the first time it is read (a submitter that takes bytes never needs it).
 */
export function signedTransaction(bytes: Uint8Array, hash: Hash = keccak256(bytes)): SignedTransaction {
  let serialized: Hex | undefined;
  return {
    bytes,
    hash,
    get serialized(): Hex {
      serialized ??= `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;
      return serialized;
    },
  };
}

/** What a signer handed back, as the engine carries it: hex (a viem account, a KMS) read into bytes and hashed once. */
export function toSignedTransaction(signed: Hex | SignedTransaction): SignedTransaction {
  if (typeof signed !== "string") return signed;
  const bytes = Buffer.from(signed.slice(2), "hex");
  return { serialized: signed, bytes, hash: keccak256(bytes) };
}
