import { type Hex, numberToHex, size } from "viem";
import type { UserOperationV07 } from "./types.ts";

/**
 * EntryPoint v0.9's paymaster signature: `paymasterAndData` may end with
 * `paymasterSignature ‖ uint16(length) ‖ magic`, a suffix the userOpHash leaves out (it covers the
 * bytes before the signature, then the magic), so a paymaster can sign after the account.
 */
export const paymasterSignatureMagic: Hex = "0x22e325a297439656";

const magicBytes = Buffer.from(paymasterSignatureMagic.slice(2), "hex");
/** The static part of a v0.7+ `paymasterAndData`: paymaster and its two gas limits. */
const paymasterDataOffset = 52;
/** The length field and the magic after the signature. */
const suffixLength = 10;

/** The most bytes a paymaster signature can have (its length is a uint16). */
export const maxPaymasterSignatureSize = 0xffff;

/**
 * The length of the paymaster signature at the end of a v0.9 `paymasterAndData`, as the
 * EntryPoint reads it: 0 without the magic, undefined when the length field reaches into the
 * paymaster's static fields (the EntryPoint reverts with `InvalidPaymasterSignatureLength`).
 */
export function paymasterSignatureLength(paymasterAndData: Uint8Array): number | undefined {
  const length = paymasterAndData.length;
  if (length < paymasterDataOffset + suffixLength) return 0;
  if (!magicBytes.equals(paymasterAndData.subarray(length - magicBytes.length))) return 0;
  const signatureLength =
    (paymasterAndData[length - suffixLength]! << 8) | paymasterAndData[length - suffixLength + 1]!;
  return signatureLength > length - paymasterDataOffset - suffixLength
    ? undefined
    : signatureLength;
}

/**
 * The bytes of a v0.9 `paymasterAndData` its userOpHash covers: everything before the paymaster
 * signature, then the magic; all of it when there is no signature. (`paymasterSignatureLength`
 * undefined is refused when the operation is decoded: here the bytes are taken whole.)
 */
export function paymasterAndDataForHash(paymasterAndData: Uint8Array): Uint8Array {
  const signatureLength = paymasterSignatureLength(paymasterAndData);
  if (!signatureLength) return paymasterAndData;
  const signed = paymasterAndData.subarray(
    0,
    paymasterAndData.length - signatureLength - suffixLength,
  );
  return Buffer.concat([signed, magicBytes]);
}

/** The suffix that carries `paymasterSignature` at the end of `paymasterAndData`; empty for none. */
export function paymasterSignatureSuffix(op: Pick<UserOperationV07, "paymasterSignature">): Hex {
  const signature = op.paymasterSignature;
  if (signature === undefined || signature === "0x") return "0x";
  return `${signature}${numberToHex(size(signature), { size: 2 }).slice(2)}${paymasterSignatureMagic.slice(2)}`;
}
