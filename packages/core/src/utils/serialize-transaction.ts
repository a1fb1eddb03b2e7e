import { type Hex, type Signature, type TransactionSerializable, serializeTransaction as viemSerializeTransaction } from "viem";
import { getAddress } from "./get-address.ts";

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

/**
 * A transaction as a signer serializes it, as bytes: `payload`, what is hashed and signed
 * (`serializeTransaction` without a signature; an EIP-4844 transaction's without its sidecars, as
 * viem signs it), and `withSignature`, what is sent (`serializeTransaction` with the signature).
 * A plain EIP-1559 transaction's calldata is converted from hex once for both, and each is laid out
 * in one buffer; any other goes through viem.
 */
export function serializeForSigning(transaction: TransactionSerializable): { payload: Uint8Array; withSignature(signature: Signature): Uint8Array } {
  const fields = plainEip1559Fields(transaction);
  const bytesOf = (hex: Hex) => Buffer.from(hex.slice(2), "hex");
  const viaViem = (signature: Signature) => bytesOf(viemSerializeTransaction(transaction, signature));
  if (!fields) {
    const signable = transaction.type === "eip4844" ? { ...transaction, sidecars: false as const } : transaction;
    return { payload: bytesOf(viemSerializeTransaction(signable)), withSignature: viaViem };
  }
  return {
    payload: typedList(0x02, fields),
    withSignature(signature) {
      const parts = signatureParts(signature);
      return parts ? typedList(0x02, [...fields, ...parts.map(rlpBytes)]) : viaViem(signature);
    },
  };
}

/** The nine RLP items of a plain EIP-1559 transaction (no access list, no authorizations) before its signature; undefined for anything else or anything viem would refuse or read differently. */
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
    inputBytes,
  ].map(rlpBytes);
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
