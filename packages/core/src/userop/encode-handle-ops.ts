import { type Address, encodeFunctionData, type Hex } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { type Field, isPlainField, structFields } from "./abi-measure.ts";
import { toEntryPointStruct } from "./pack.ts";
import type { UserOperation } from "./types.ts";

/** `handleOps(UserOperation[],address)` of v0.6, and `handleOps(PackedUserOperation[],address)` of v0.7, v0.8 and v0.9. */
const handleOpsSelector = { "0.6": "0x1fad948c", packed: "0x765e827f" } as const;

/**
 * The `handleOps(ops, beneficiary)` calldata of `entryPoint`, what viem's `encodeFunctionData`
 * gives, laid out by hand: every bundle is encoded once per proposal, and the generic encoder
 * cost more than the rest of building it. Anything the encoder would refuse or pad (an address
 * with a bad checksum, a value out of range, odd or non-hex bytes) goes through the encoder, which
 * answers as before.
 */
export function encodeHandleOps(entryPoint: EntryPoint, ops: readonly UserOperation[], beneficiary: Address): Hex {
  const tuples = ops.map(structFields);
  const beneficiaryField = { fixed: beneficiary };
  if (!isPlainField(beneficiaryField) || !tuples.every((fields) => fields.every(isPlainField))) {
    return encodeHandleOpsWithAbi(entryPoint, ops, beneficiary);
  }
  const selector = entryPoint.version === "0.6" ? handleOpsSelector["0.6"] : handleOpsSelector.packed;
  const encoded = tuples.map(encodeTuple);
  const parts = [selector, uintWord(64), fixedWord(beneficiary), uintWord(ops.length)];
  let offset = 32 * ops.length;
  for (const tuple of encoded) {
    parts.push(uintWord(offset));
    offset += tuple.length / 2;
  }
  return parts.concat(encoded).join("") as Hex;
}

/** `encodeHandleOps` through viem's encoder: what the hand layout must equal, and the answer where it declines. */
export function encodeHandleOpsWithAbi(entryPoint: EntryPoint, ops: readonly UserOperation[], beneficiary: Address): Hex {
  return encodeFunctionData({ abi: entryPoint.abi, functionName: "handleOps", args: [ops.map((op) => toEntryPointStruct(op)), beneficiary] } as never);
}

/** A uint256 word, as hex without `0x`. */
const uintWord = (value: bigint | number) => value.toString(16).padStart(64, "0");

/** A uint128 half word, as hex without `0x`. */
const halfWord = (value: bigint) => value.toString(16).padStart(32, "0");

/** An address left-padded to a word (lower-case, as the encoder writes it), or a bytes32 as it is. */
const fixedWord = (hex: Hex) => (hex.length === 42 ? `${"0".repeat(24)}${hex.slice(2).toLowerCase()}` : hex.slice(2));

/** Plain fields as one ABI tuple without `0x`: a head word each (an offset for `bytes`), then each `bytes`' length and data right-padded to whole words. */
function encodeTuple(fields: readonly Field[]): string {
  let head = "";
  let tail = "";
  let tailOffset = 32 * fields.length;
  for (const field of fields) {
    if ("word" in field) head += uintWord(field.word);
    else if ("high" in field) head += halfWord(field.high) + halfWord(field.low);
    else if ("fixed" in field) head += fixedWord(field.fixed);
    else {
      const length = (field.bytes.length - 2) / 2;
      const padded = Math.ceil(length / 32) * 32;
      head += uintWord(tailOffset);
      tail += uintWord(length) + field.bytes.slice(2) + "0".repeat((padded - length) * 2);
      tailOffset += 32 + padded;
    }
  }
  return head + tail;
}
