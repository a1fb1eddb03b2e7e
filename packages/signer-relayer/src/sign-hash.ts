import secp256k1 from "secp256k1";
import { type Hex, type Signature, toHex } from "viem";

/**
 * The signature of a 32-byte hash with `privateKey`, as viem's `sign` gives it (RFC 6979, low s),
 * through libsecp256k1 (the `secp256k1` package's prebuilt binding, or its JavaScript fallback where
 * the binding does not load): every bundle is signed, and noble's JavaScript took longer than
 * building the bundle.
 */
export function signHash(hash: Hex | Uint8Array, privateKey: Hex): Signature {
  const digest = typeof hash === "string" ? Buffer.from(hash.slice(2), "hex") : hash;
  const { signature, recid } = secp256k1.ecdsaSign(digest, Buffer.from(privateKey.slice(2), "hex"));
  return {
    r: toHex(signature.subarray(0, 32)),
    s: toHex(signature.subarray(32, 64)),
    v: recid ? 28n : 27n,
    yParity: recid,
  };
}
