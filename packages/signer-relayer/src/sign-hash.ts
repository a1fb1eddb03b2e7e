import { createRequire } from "node:module";
import type * as Secp256k1 from "secp256k1";
import { type Hex, type Signature, toHex } from "viem";
import { sign } from "viem/accounts";

/**
 * The signature of a 32-byte hash with `privateKey`, as viem's `sign` gives it (RFC 6979, low s),
 * through libsecp256k1 (the `secp256k1` package's prebuilt binding): every bundle is signed, and
 * noble's JavaScript took longer than building the bundle. viem's `sign` where the binding does not
 * load, with the same result.
 */
export const signHash: (hash: Hex, privateKey: Hex) => Promise<Signature> = fromBinding(loadBinding()) ?? ((hash, privateKey) => sign({ hash, privateKey }));

function loadBinding(): typeof Secp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as typeof Secp256k1;
  } catch {
    return undefined;
  }
}

function fromBinding(secp256k1: typeof Secp256k1 | undefined) {
  if (!secp256k1) return undefined;
  return async (hash: Hex, privateKey: Hex): Promise<Signature> => {
    const { signature, recid } = secp256k1.ecdsaSign(Buffer.from(hash.slice(2), "hex"), Buffer.from(privateKey.slice(2), "hex"));
    return {
      r: toHex(signature.subarray(0, 32)),
      s: toHex(signature.subarray(32, 64)),
      v: recid ? 28n : 27n,
      yParity: recid,
    };
  };
}
