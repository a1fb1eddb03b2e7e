import { createRequire } from "node:module";
import type * as Secp256k1 from "secp256k1";

type Ecrecover = (msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array) => Uint8Array;

/**
 * The ECRECOVER precompile's key recovery through libsecp256k1 (the `secp256k1` package's prebuilt
 * binding), for `@ethereumjs/common`'s `customCrypto.ecrecover`. Nearly every account checks an ECDSA
 * signature in validation, and the EVM's own pure-JavaScript recovery costs about 1.5 ms of CPU a
 * call, a fifth of a traced validation. `undefined` where the binding does not load: the EVM then
 * keeps its own implementation, with the same results.
 */
export const nativeEcrecover: Ecrecover | undefined = fromBinding(loadBinding());

function loadBinding(): typeof Secp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as typeof Secp256k1;
  } catch {
    return undefined;
  }
}

/** The precompile passes 32-byte `r` and `s` and `v` of 27 or 28; a signature that recovers no key throws, as the EVM's own does. */
function fromBinding(secp256k1: typeof Secp256k1 | undefined): Ecrecover | undefined {
  if (!secp256k1) return undefined;
  return (msgHash, v, r, s) => {
    const signature = new Uint8Array(64);
    signature.set(r, 0);
    signature.set(s, 32);
    return secp256k1.ecdsaRecover(signature, Number(v - 27n), msgHash, false).subarray(1);
  };
}
