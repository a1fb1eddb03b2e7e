import { encodeAbiParameters, type Hex, hexToBytes } from "viem";
import { isAddress } from "../utils/get-address.ts";
import { packedInitCode, packedPaymasterAndData, packsPlainly, toEntryPointStruct } from "./pack.ts";
import { isUserOperationV06, type UserOperation } from "./types.ts";

/**
 * One parameter of a flat ABI encoding: a static word (uint256; two uint128 halves, as v0.7+ packs
 * gas limits and fees into a bytes32; an address or a bytes32) or dynamic `bytes`.
 */
export type Field = { word: bigint } | { high: bigint; low: bigint } | { fixed: Hex } | { bytes: Hex };

/** Bytes, and zero bytes among them, of an ABI encoding. */
export interface AbiMeasure {
  size: number;
  zeroBytes: number;
}

const wordLimit = 1n << 256n;
const halfLimit = 1n << 128n;
const inHalf = (value: bigint) => value >= 0n && value < halfLimit;

/** `0x` and whole bytes of hex digits, in either case. */
const evenHex = /^0x(?:[0-9a-fA-F]{2})*$/;

/**
 * Zero bytes ("00" pairs) among the hex digits of `hex` after its `0x`, or -1 when it is not `0x`
 * and an even number of hex digits. Checked by one regular expression and counted by `indexOf`,
 * both native: every operation's `bytes` are read so at admission and again in each bundle
 * proposed, and a loop over their characters in JavaScript took twice as long.
 */
export function evenHexZeros(hex: string): number {
  return evenHex.test(hex) ? zeroPairs(hex) : -1;
}

/** Zero bytes ("00" pairs) among the hex digits of `hex` after its `0x`, which the caller has checked. */
function zeroPairs(hex: string): number {
  let zeros = 0;
  for (let i = hex.indexOf("00", 2); i !== -1; i = hex.indexOf("00", i + 1)) if (i % 2 === 0) zeros++;
  return zeros;
}

/**
 * Whether viem's encoder takes `field` as it is, without refusing or padding it: a word within
 * uint256, halves within uint128, an address (checksum checked, as the encoder does) or exactly
 * 32 bytes, even hex bytes. What a hand encoding or measure of the field may assume; anything
 * else goes to the encoder.
 */
export function isPlainField(field: Field): boolean {
  if ("word" in field) return field.word >= 0n && field.word < wordLimit;
  if ("high" in field) return inHalf(field.high) && inHalf(field.low);
  if ("fixed" in field) return field.fixed.length === 42 ? isAddress(field.fixed) : field.fixed.length === 66 && evenHexZeros(field.fixed) >= 0;
  return evenHexZeros(field.bytes) >= 0;
}

/** Zero bytes of `value` (not negative) as a `bytes`-byte big-endian number; a safe integer without its hex. */
function valueZeros(value: bigint, bytes: number): number {
  if (value <= maxSafe) return numberZeros(Number(value), bytes);
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return bytes - hex.length / 2 + zeroPairs(`0x${hex}`);
}
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

/** Zero bytes of a safe integer `n` (not negative) as a `bytes`-byte big-endian number: all but its non-zero bytes, counted in two 32-bit halves. */
function numberZeros(n: number, bytes: number): number {
  let zeros = bytes;
  let high = Math.floor(n / 0x1_0000_0000);
  for (let low = n - high * 0x1_0000_0000; low !== 0; low >>>= 8) if ((low & 0xff) !== 0) zeros--;
  for (; high !== 0; high >>>= 8) if ((high & 0xff) !== 0) zeros--;
  return zeros;
}

/** Zero bytes of a field's own bytes (a static field's word, a `bytes` field's data), or -1 when it is not plain. */
function fieldZeros(field: Field): number {
  if ("word" in field) return field.word >= 0n && field.word < wordLimit ? valueZeros(field.word, 32) : -1;
  if ("high" in field) return inHalf(field.high) && inHalf(field.low) ? valueZeros(field.high, 16) + valueZeros(field.low, 16) : -1;
  // Addresses are left-padded, bytes32 is exact: either way 32 bytes, the missing ones zero.
  if ("fixed" in field) return isPlainField(field) ? 32 - (field.fixed.length - 2) / 2 + zeroPairs(field.fixed) : -1;
  return evenHexZeros(field.bytes);
}

/**
 * What `encodeAbiParameters` of these fields after `prefix` (one head word each, then each
 * `bytes`' length and padded data) would measure, without building it, from each field's zero
 * bytes (`fieldZeros`). `undefined` for a value the encoder would refuse (out of range, odd or
 * non-hex): the caller encodes then, and gets the encoder's error.
 */
function measureFields(fields: readonly Field[], zeros: readonly number[], prefix: Hex | undefined): AbiMeasure | undefined {
  let size = 32 * fields.length;
  let zeroBytes = 0;
  if (prefix !== undefined) {
    const prefixZeros = fieldZeros({ fixed: prefix });
    if (prefixZeros < 0) return undefined;
    size += 32;
    zeroBytes += prefixZeros;
  }
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (zeros[i]! < 0) return undefined;
    zeroBytes += zeros[i]!;
    if ("bytes" in field) {
      const length = (field.bytes.length - 2) / 2;
      const padded = Math.ceil(length / 32) * 32;
      // Besides its data: the head word pointing at it, its length word and the padding.
      zeroBytes += numberZeros(size, 32) + numberZeros(length, 32) + (padded - length);
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
 * leading `bytes32` (`prefix`). Admission measures every operation twice (its size limit, then
 * after simulation its `preVerificationGas`), and bundling again per candidate: counting is much
 * cheaper than encoding, and the fields of the operation measured last are not read again.
 */
export function measureUserOperation(op: UserOperation, prefix?: Hex): AbiMeasure {
  const { fields, zeros } = readFields(op);
  return measureFields(fields, zeros, prefix) ?? measureEncoded(encodeFields(prefix ? [{ fixed: prefix }, ...fields] : fields));
}

/** An operation's struct fields, each one's zero bytes, and the operation's values they were read from. */
interface ReadFields {
  op: UserOperation;
  values: unknown[];
  fields: Field[];
  zeros: number[];
}

/**
 * The operation's struct fields and their zero bytes (`fieldZeros`); those of the operation read
 * last are kept while it is the same object with the same values (one changed in place is read
 * again). Reading every `bytes` field is what measuring costs, and admission measures each
 * operation twice with no other measure in between.
 */
function readFields(op: UserOperation): ReadFields {
  const keys = isUserOperationV06(op) ? v06Keys : v07Keys;
  const record = op as unknown as Record<string, unknown>;
  if (last?.op === op && last.values.length === keys.length && keys.every((key, i) => record[key] === last!.values[i])) return last;
  const fields = structFields(op);
  last = { op, values: keys.map((key) => record[key]), fields, zeros: fields.map(fieldZeros) };
  return last;
}
let last: ReadFields | undefined;

/** The operation fields its struct is made from, for each layout. */
const v06Keys = ["sender", "nonce", "initCode", "callData", "callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas", "maxPriorityFeePerGas", "paymasterAndData", "signature"];
const v07Keys = [
  ...v06Keys.filter((key) => key !== "initCode" && key !== "paymasterAndData"),
  "factory",
  "factoryData",
  "paymaster",
  "paymasterVerificationGasLimit",
  "paymasterPostOpGasLimit",
  "paymasterData",
  "paymasterSignature",
];

/**
 * The struct's fields in the EntryPoint's order: the v0.6 `UserOperation` or the v0.7+
 * `PackedUserOperation`, its packed words as their halves when `toEntryPointStruct` would pack
 * them itself (no hex is made for them until they are encoded).
 */
export function structFields(op: UserOperation): Field[] {
  if (isUserOperationV06(op)) {
    return [
      { fixed: op.sender },
      { word: op.nonce },
      { bytes: op.initCode },
      { bytes: op.callData },
      { word: op.callGasLimit },
      { word: op.verificationGasLimit },
      { word: op.preVerificationGas },
      { word: op.maxFeePerGas },
      { word: op.maxPriorityFeePerGas },
      { bytes: op.paymasterAndData },
      { bytes: op.signature },
    ];
  }
  if (packsPlainly(op)) {
    return [
      { fixed: op.sender },
      { word: op.nonce ?? 0n },
      { bytes: packedInitCode(op) },
      { bytes: op.callData },
      { high: op.verificationGasLimit ?? 0n, low: op.callGasLimit ?? 0n },
      { word: op.preVerificationGas ?? 0n },
      { high: op.maxPriorityFeePerGas ?? 0n, low: op.maxFeePerGas ?? 0n },
      { bytes: packedPaymasterAndData(op) },
      { bytes: op.signature ?? "0x" },
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

/** Two uint128 halves as the bytes32 they pack into. */
export const halvesHex = (field: { high: bigint; low: bigint }): Hex =>
  `0x${field.high.toString(16).padStart(32, "0")}${field.low.toString(16).padStart(32, "0")}`;

/** The fields through viem's encoder (addresses as `address`, other fixed hex as `bytes32`). */
export function encodeFields(fields: readonly Field[]): Hex {
  return encodeAbiParameters(
    fields.map((f) => ({
      type:
        "word" in f
          ? "uint256"
          : "bytes" in f
            ? "bytes"
            : "fixed" in f && f.fixed.length === 42
              ? "address"
              : "bytes32",
    })),
    fields.map((f) => ("word" in f ? f.word : "bytes" in f ? f.bytes : "high" in f ? halvesHex(f) : f.fixed)),
  );
}
