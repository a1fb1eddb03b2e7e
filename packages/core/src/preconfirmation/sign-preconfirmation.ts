import { type LocalAccount, zeroAddress } from "viem";
import type { Preconfirmation } from "../ports/preconfirmation-store.ts";
import { type PreconfirmationTypedDataParameters, preconfirmationTypedData } from "./preconfirmation-typed-data.ts";

/** Signs preconfirmations: a viem `LocalAccount` (e.g. `privateKeyToAccount`), or anything with its `address` and `signTypedData`. */
export type PreconfirmationSigner = Pick<LocalAccount, "address" | "signTypedData">;

/**
 * A new `promised` preconfirmation, signed by `signer` over `preconfirmationTypedData`; without a
 * signer, unsigned (`signature` null, `signer` the zero address).
 */
export async function signPreconfirmation(
  signer: PreconfirmationSigner | undefined,
  promise: PreconfirmationTypedDataParameters,
): Promise<Preconfirmation> {
  const signature = signer ? await signer.signTypedData(preconfirmationTypedData(promise)) : null;
  return { ...promise, signer: signer?.address ?? zeroAddress, signature, status: "promised" };
}
