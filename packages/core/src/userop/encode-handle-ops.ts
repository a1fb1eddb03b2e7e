import { type Address, encodeFunctionData, type Hex } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { type Field, isPlainField, structFields } from "./abi-measure.ts";
import { toEntryPointStruct } from "./pack.ts";
import { writeHexDigits, writeUint } from "./write-words.ts";
import type { UserOperation } from "./types.ts";

/** `handleOps(UserOperation[],address)` of v0.6, and `handleOps(PackedUserOperation[],address)` of v0.7, v0.8 and v0.9. */
const handleOpsSelector = { "0.6": "0x1fad948c", packed: "0x765e827f" } as const;

/**
 * The `handleOps(ops, beneficiary)` calldata of `entryPoint`: the bytes viem's
 * `encodeFunctionData` gives, laid out by hand in one zeroed buffer and written as lower-case hex
 * (viem keeps the letter case of the operations' bytes). Every bundle is encoded once per
 * proposal, and the generic encoder cost more than the rest of building it. Anything the encoder
 * would refuse or pad (an address with a bad checksum, a value out of range, odd or non-hex bytes)
 * goes through the encoder, which answers as before.
 */
export function encodeHandleOps(entryPoint: EntryPoint, ops: readonly UserOperation[], beneficiary: Address): Hex {
  const tuples = ops.map(structFields);
  const beneficiaryField = { fixed: beneficiary };
  if (!isPlainField(beneficiaryField) || !tuples.every((fields) => fields.every(isPlainField))) {
    return encodeHandleOpsWithAbi(entryPoint, ops, beneficiary);
  }
  const selector = entryPoint.version === "0.6" ? handleOpsSelector["0.6"] : handleOpsSelector.packed;
  const sizes = tuples.map(tupleSize);
  // The selector, the two head words, the array's length and one offset word per operation, then the tuples.
  const data = Buffer.alloc(4 + 32 * (3 + ops.length) + sizes.reduce((sum, size) => sum + size, 0));
  data.write(selector.slice(2), 0, 4, "hex");
  writeUint(data, 4, 32, 64);
  writeField(data, 36, beneficiaryField);
  writeUint(data, 68, 32, ops.length);
  let offset = 32 * ops.length;
  for (let i = 0; i < tuples.length; i++) {
    writeUint(data, 100 + 32 * i, 32, offset);
    writeTuple(data, 100 + offset, tuples[i]!);
    offset += sizes[i]!;
  }
  return `0x${data.toString("hex")}`;
}

/** `encodeHandleOps` through viem's encoder: what the hand layout must equal, and the answer where it declines. */
export function encodeHandleOpsWithAbi(entryPoint: EntryPoint, ops: readonly UserOperation[], beneficiary: Address): Hex {
  return encodeFunctionData({ abi: entryPoint.abi, functionName: "handleOps", args: [ops.map((op) => toEntryPointStruct(op)), beneficiary] } as never);
}

/** Bytes of plain fields as one ABI tuple: a head word each, then each `bytes`' length and data padded to whole words. */
function tupleSize(fields: readonly Field[]): number {
  let size = 32 * fields.length;
  for (const field of fields) if ("bytes" in field) size += 32 + paddedLength(field.bytes);
  return size;
}

/** Bytes of hex `bytes` padded to whole words. */
const paddedLength = (bytes: Hex) => Math.ceil((bytes.length - 2) / 64) * 32;

/** Plain fields as one ABI tuple into the zeroed `data` at `at` (offsets within the tuple): padding is the zeros already there. */
function writeTuple(data: Buffer, at: number, fields: readonly Field[]): void {
  let tail = 32 * fields.length;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (!("bytes" in field)) {
      writeField(data, at + 32 * i, field);
      continue;
    }
    const length = (field.bytes.length - 2) / 2;
    writeUint(data, at + 32 * i, 32, tail);
    writeUint(data, at + tail, 32, length);
    data.write(field.bytes.slice(2), at + tail + 32, length, "hex");
    tail += 32 + paddedLength(field.bytes);
  }
}

/** A static plain field as its word at `at`: an address left-padded, a bytes32 as it is, numbers big-endian. */
function writeField(data: Buffer, at: number, field: Exclude<Field, { bytes: Hex }>): void {
  if ("word" in field) writeUint(data, at, 32, field.word);
  else if ("high" in field) {
    writeUint(data, at, 16, field.high);
    writeUint(data, at + 16, 16, field.low);
  } else if (field.fixed.length === 42) writeHexDigits(data, at + 12, field.fixed, 20);
  else writeHexDigits(data, at, field.fixed, 32);
}
