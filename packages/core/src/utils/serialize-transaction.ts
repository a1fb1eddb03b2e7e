import { type Hex, type Signature, type TransactionSerializable, serializeTransaction as viemSerializeTransaction } from "viem";
import { getAddress } from "./get-address.ts";
import { keccak256Bytes } from "./keccak.ts";

const maxUint256 = (1n << 256n) - 1n;

/**
 * viem's `serializeTransaction`, with a plain EIP-1559 transaction (no access list, no
 * authorizations) laid out by hand over buffers: a bundle transaction carries tens of kilobytes of
 * calldata, and viem converts them between hex and bytes several times on the way to RLP. Every
 * other transaction, and anything viem would refuse or read differently, goes to viem.
 */
export function serializeTransaction(transaction: TransactionSerializable, signature?: Signature): Hex {
  const fields = plainEip1559Fields(transaction);
  const parts = fields && signature ? signatureParts(signature)?.map(rlpBytes) : [];
  return fields && parts ? `0x${typedList(0x02, [...fields, ...parts]).toString("hex")}` : viemSerializeTransaction(transaction, signature);
}

/** Room before a plain transaction's fields for its type byte and the longest list prefix, and after them for a signature's three items. */
const headRoom = 10;
const signatureRoom = 1 + 2 * 33;

/**
 * `transaction` as a signer sends it, as bytes: its signing payload (`serializeTransaction`
 * without a signature; an EIP-4844 transaction's without its sidecars, as viem signs it) hashed
 * with keccak256 and handed to `sign`, then serialized with the signature it returns (what
 * `serializeTransaction` writes with it). A plain EIP-1559 transaction's calldata is read from hex
 * once, into the one buffer the payload is hashed in and the signed transaction written to; any
 * other goes through viem.
 */
export function serializeSigned(transaction: TransactionSerializable, sign: (digest: Uint8Array) => Signature): Uint8Array {
  const fields = plainEip1559Fields(transaction);
  const bytesOf = (hex: Hex) => Buffer.from(hex.slice(2), "hex");
  if (!fields) {
    const signable = transaction.type === "eip4844" ? { ...transaction, sidecars: false as const } : transaction;
    return bytesOf(viemSerializeTransaction(transaction, sign(keccak256Bytes(bytesOf(viemSerializeTransaction(signable))))));
  }
  const length = fields.reduce((sum, item) => sum + item.length, 0);
  const buffer = Buffer.allocUnsafe(headRoom + length + signatureRoom);
  let end = headRoom;
  for (const item of fields) end += item.copy(buffer, end);
  /** The type byte and the list prefix, written right before the fields: the transaction up to `end`. */
  const framed = (end: number) => {
    const prefix = rlpLength(end - headRoom, 0xc0);
    const start = headRoom - 1 - prefix.length;
    buffer[start] = 0x02;
    prefix.copy(buffer, start + 1);
    return buffer.subarray(start, end);
  };
  const signature = sign(keccak256Bytes(framed(end)));
  const parts = signatureParts(signature)?.map(rlpBytes);
  if (!parts) return bytesOf(viemSerializeTransaction(transaction, signature));
  if (parts.reduce((sum, item) => sum + item.length, 0) > signatureRoom) return typedList(0x02, [...fields, ...parts]);
  for (const item of parts) end += item.copy(buffer, end);
  return framed(end);
}

/**
 * The nine RLP items of a plain EIP-1559 transaction (no access list, no authorizations) before its
 * signature, in pieces to be written one after another (the calldata's prefix and the calldata
 * apart); undefined for anything else or anything viem would refuse or read differently.
 */
function plainEip1559Fields(transaction: TransactionSerializable): Buffer[] | undefined {
  if (transaction.type !== "eip1559") return undefined;
  const { chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gas, to, value, data, accessList } = transaction;
  if (accessList !== undefined && accessList.length > 0) return undefined;
  if (!(Number.isSafeInteger(chainId) && chainId > 0) || !(nonce === undefined || (Number.isSafeInteger(nonce) && nonce >= 0))) return undefined;
  if (![maxPriorityFeePerGas, maxFeePerGas, gas, value].every((n) => n === undefined || (typeof n === "bigint" && n >= 0n && n <= maxUint256))) return undefined;
  if (maxPriorityFeePerGas !== undefined && maxFeePerGas !== undefined && maxPriorityFeePerGas > maxFeePerGas) return undefined;
  // An address as viem takes it: lower case, or checksummed right.
  if (to != null && !(/^0x[0-9a-fA-F]{40}$/.test(to) && (to === to.toLowerCase() || getAddress(to) === to))) return undefined;
  const input = data ?? "0x";
  const inputBytes = Buffer.from(input.slice(2), "hex");
  // Buffer.from stops at the first pair that is not hex: then the calldata is not plain even hex.
  if (!input.startsWith("0x") || inputBytes.length * 2 !== input.length - 2) return undefined;
  const fields = [
    integer(chainId),
    integer(nonce),
    integer(maxPriorityFeePerGas),
    integer(maxFeePerGas),
    integer(gas),
    Buffer.from(to ? to.slice(2) : "", "hex"),
    integer(value),
  ].map(rlpBytes);
  // The calldata's prefix and the calldata as two pieces, not copied into an item of their own (a single byte below 0x80 is its own item).
  fields.push(...(inputBytes.length === 1 && inputBytes[0]! < 0x80 ? [inputBytes] : [rlpLength(inputBytes.length, 0x80), inputBytes]));
  fields.push(rlpList([]));
  return fields;
}

/** A typed transaction: its type byte, then `items` as one RLP list, in one buffer. */
function typedList(type: number, items: readonly Buffer[]): Buffer {
  const length = items.reduce((sum, item) => sum + item.length, 0);
  const prefix = rlpLength(length, 0xc0);
  const out = Buffer.allocUnsafe(1 + prefix.length + length);
  out[0] = type;
  let at = 1 + prefix.copy(out, 1);
  for (const item of items) at += item.copy(out, at);
  return out;
}

/** `yParity`, `r` and `s` as viem writes them (`toYParitySignatureArray`); none without `r`, `s` and a parity. */
function signatureParts(signature: Signature): Buffer[] | undefined {
  const { r, s, v, yParity } = signature;
  if (r === undefined || s === undefined || (v === undefined && yParity === undefined)) return [];
  if (!/^0x[0-9a-fA-F]*$/.test(r) || !/^0x[0-9a-fA-F]*$/.test(s)) return undefined;
  const odd = typeof yParity === "number" ? yParity !== 0 : !(v === 0n || v === 27n);
  return [integer(odd ? 1 : 0), integer(BigInt(r === "0x" ? 0 : r)), integer(BigInt(s === "0x" ? 0 : s))];
}

/** An RLP integer: big-endian without leading zeros, empty for zero (and for none). */
function integer(value: number | bigint | undefined): Buffer {
  if (!value) return Buffer.alloc(0);
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 1 ? `0${hex}` : hex, "hex");
}

function rlpBytes(bytes: Buffer): Buffer {
  if (bytes.length === 1 && bytes[0]! < 0x80) return bytes;
  return Buffer.concat([rlpLength(bytes.length, 0x80), bytes]);
}

function rlpList(items: readonly Buffer[]): Buffer {
  const length = items.reduce((sum, item) => sum + item.length, 0);
  return Buffer.concat([rlpLength(length, 0xc0), ...items], length + (length <= 55 ? 1 : 1 + integer(length).length));
}

/**
 * The RLP prefix of an item of `length` bytes (`offset` 0x80 for bytes, 0xc0 for a list):
 * `offset + length` up to 55, else `offset + 55 + n` and the length in n bytes.
 */
export function rlpLength(length: number, offset: number): Buffer {
  if (length <= 55) return Buffer.from([offset + length]);
  const bytes = integer(length);
  return Buffer.concat([Buffer.from([offset + 55 + bytes.length]), bytes]);
}
