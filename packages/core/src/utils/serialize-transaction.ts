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
  return serializePlainEip1559(transaction, signature) ?? viemSerializeTransaction(transaction, signature);
}

function serializePlainEip1559(transaction: TransactionSerializable, signature: Signature | undefined): Hex | undefined {
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
  if (signature) {
    const parts = signatureParts(signature);
    if (!parts) return undefined;
    fields.push(...parts.map(rlpBytes));
  }
  return `0x02${rlpList(fields).toString("hex")}`;
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
