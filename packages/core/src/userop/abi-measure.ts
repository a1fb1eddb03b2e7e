import { encodeAbiParameters, type Hex, hexToBytes } from "viem";
import { isAddress } from "../utils/get-address.ts";
import { toEntryPointStruct } from "./pack.ts";
import { isUserOperationV06, type UserOperation } from "./types.ts";

/** One parameter of a flat ABI encoding: a static word (uint256, bytes32, address) or dynamic `bytes`. */
export type Field = { word: bigint } | { fixed: Hex } | { bytes: Hex };

/** Bytes, and zero bytes among them, of an ABI encoding. */
export interface AbiMeasure {
  size: number;
  zeroBytes: number;
}

const wordLimit = 1n << 256n;
const isEvenHex = (hex: string) => hex.length % 2 === 0 && /^0x[0-9a-fA-F]*$/.test(hex);

/**
 * Whether viem's encoder takes `field` as it is, without refusing or padding it: a word within
 * uint256, an address (checksum checked, as the encoder does) or exactly 32 bytes, even hex bytes.
 * What a hand encoding or measure of the field may assume; anything else goes to the encoder.
 */
export function isPlainField(field: Field): boolean {
  if ("word" in field) return field.word >= 0n && field.word < wordLimit;
  if ("fixed" in field) return field.fixed.length === 42 ? isAddress(field.fixed) : field.fixed.length === 66 && isEvenHex(field.fixed);
  return isEvenHex(field.bytes);
}

/** Zero bytes ("00" pairs) among the hex digits of `hex` from `start`. */
function zeroPairs(hex: string, start: number): number {
  let zeros = 0;
  for (let i = start; i < hex.length; i += 2)
    if (hex.charCodeAt(i) === 48 && hex.charCodeAt(i + 1) === 48) zeros++;
  return zeros;
}

/** Zero bytes of `value` as a 32-byte big-endian word. */
function wordZeros(value: bigint): number {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return 32 - hex.length / 2 + zeroPairs(hex, 0);
}

/**
 * What `encodeAbiParameters` of these fields (one head word each, then each `bytes`' length and
 * padded data) would measure, without building it. `undefined` for a value the encoder would
 * refuse (out of range, odd or non-hex): the caller encodes then, and gets the encoder's error.
 */
function measureFields(fields: readonly Field[], countZeros: boolean): AbiMeasure | undefined {
  let size = 32 * fields.length;
  let zeroBytes = 0;
  for (const field of fields) {
    if (!isPlainField(field)) return undefined;
    if ("word" in field) {
      if (countZeros) zeroBytes += wordZeros(field.word);
    } else if ("fixed" in field) {
      // Addresses are left-padded, bytes32 is exact: either way 32 bytes, the missing ones zero.
      if (countZeros) zeroBytes += 32 - (field.fixed.length - 2) / 2 + zeroPairs(field.fixed, 2);
    } else {
      const length = (field.bytes.length - 2) / 2;
      const padded = Math.ceil(length / 32) * 32;
      if (countZeros) {
        zeroBytes +=
          wordZeros(BigInt(size)) +
          wordZeros(BigInt(length)) +
          zeroPairs(field.bytes, 2) +
          (padded - length);
      }
      size += 32 + padded;
    }
  }
  return { size, zeroBytes };
}

/** `measure` of an encoding, the slow way: what the shortcut must equal (and the answer where it declines). */
export function measureEncoded(encoded: Hex): AbiMeasure {
  const bytes = hexToBytes(encoded);
  return {
    size: bytes.length,
    zeroBytes: bytes.reduce((zeros, byte) => zeros + (byte === 0 ? 1 : 0), 0),
  };
}

/**
 * Size and zero bytes of the operation's fields ABI-encoded one after another, as the EntryPoint
 * takes its struct (v0.6 `UserOperation` or v0.7+ `PackedUserOperation`), optionally after a
 * leading `bytes32` (`prefix`). Admission measures every operation twice (its size limit and its
 * `preVerificationGas`), and bundling again per candidate: counting is much cheaper than encoding.
 */
export function measureUserOperation(op: UserOperation, prefix?: Hex): AbiMeasure {
  const fields: Field[] = [...(prefix ? [{ fixed: prefix }] : []), ...structFields(op)];
  return measureFields(fields, true) ?? measureEncoded(encodeFields(fields));
}

/**
 * `measureUserOperation(op).size` without counting zero bytes: the size limit (LIM-010) at
 * admission, and each candidate's share of a bundle's calldata, need only the size.
 */
export function measureUserOperationSize(op: UserOperation): number {
  const fields = structFields(op);
  return (measureFields(fields, false) ?? measureEncoded(encodeFields(fields))).size;
}

/** The struct's fields in the EntryPoint's order: the v0.6 `UserOperation` or the v0.7+ `PackedUserOperation`. */
export function structFields(op: UserOperation): Field[] {
  if (isUserOperationV06(op)) {
    const gas = [
      op.callGasLimit,
      op.verificationGasLimit,
      op.preVerificationGas,
      op.maxFeePerGas,
      op.maxPriorityFeePerGas,
    ];
    return [
      { fixed: op.sender },
      { word: op.nonce },
      { bytes: op.initCode },
      { bytes: op.callData },
      ...gas.map((word) => ({ word })),
      { bytes: op.paymasterAndData },
      { bytes: op.signature },
    ];
  }
  const p = toEntryPointStruct(op);
  return [
    { fixed: p.sender },
    { word: p.nonce },
    { bytes: p.initCode },
    { bytes: p.callData },
    { fixed: p.accountGasLimits },
    { word: p.preVerificationGas },
    { fixed: p.gasFees },
    { bytes: p.paymasterAndData },
    { bytes: p.signature },
  ];
}

/** The fields through viem's encoder (addresses as `address`, other fixed hex as `bytes32`). */
export function encodeFields(fields: readonly Field[]): Hex {
  return encodeAbiParameters(
    fields.map((f) => ({
      type:
        "word" in f
          ? "uint256"
          : "bytes" in f
            ? "bytes"
            : f.fixed.length === 42
              ? "address"
              : "bytes32",
    })),
    fields.map((f) => ("word" in f ? f.word : "bytes" in f ? f.bytes : f.fixed)),
  );
}
