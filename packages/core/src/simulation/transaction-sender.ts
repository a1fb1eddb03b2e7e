import { createRequire } from "node:module";
import type * as Secp256k1 from "secp256k1";
import { type Address, type Hash, type Hex, parseTransaction, recoverTransactionAddress, type TransactionSerialized } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { keccak256, keccak256Bytes, keccak256Hex } from "../utils/keccak.ts";
import { rlpLength, serializeTransaction } from "../utils/serialize-transaction.ts";

/** libsecp256k1 through the `secp256k1` package's prebuilt binding, where it loads. */
const binding = loadBinding();

/**
 * The sender of a signed transaction, recovered as a node does: the hash of the unsigned
 * transaction (core's serializer, equal to viem's) through core's WebAssembly keccak, the key through libsecp256k1 (the
 * `secp256k1` package's prebuilt binding). `undefined` where the binding does not load or the
 * transaction carries no signature: the caller then asks viem's `recoverTransactionAddress`, which
 * gives the same address more slowly.
 */
export const recoverSenderNatively: (
  parsed: ReturnType<typeof parseTransaction>,
) => Address | undefined = fromBinding(binding) ?? (() => undefined);

function loadBinding(): typeof Secp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as typeof Secp256k1;
  } catch {
    return undefined;
  }
}

function fromBinding(secp256k1: typeof Secp256k1 | undefined) {
  if (!secp256k1) return undefined;
  return (parsed: ReturnType<typeof parseTransaction>): Address | undefined => {
    const { r, s, v: _v, yParity, ...unsigned } = parsed;
    if (r === undefined || s === undefined || yParity === undefined) return undefined;
    const signature = Buffer.from(
      `${r.slice(2).padStart(64, "0")}${s.slice(2).padStart(64, "0")}`,
      "hex",
    );
    const digest = Buffer.from(keccak256Hex(serializeTransaction(unsigned)).slice(2), "hex");
    const key = secp256k1.ecdsaRecover(signature, yParity, digest, false).subarray(1);
    const hash = keccak256Bytes(key);
    return getAddress(`0x${Buffer.from(hash.buffer, hash.byteOffset + 12, 20).toString("hex")}`);
  };
}

/** What the simulated chain keeps of a signed transaction it is sent. */
export interface SignedTransactionFacts {
  hash: Hash;
  from: Address;
  nonce: number;
  to: Address | undefined;
  /** The calldata: a view of the transaction's bytes where it was read from them. */
  input: Uint8Array;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * The hash, sender and fields of a signed transaction from its bytes, as viem's
 * `parseTransaction` and `recoverTransactionAddress` give them. A plain signed EIP-1559
 * transaction (no access list) is read straight from its RLP, its calldata kept as a view of the
 * same bytes, and its signing payload hashed from them: a bundle transaction carries tens of
 * kilobytes of calldata, which parsing and serializing again cost more than the rest of its
 * submission. Anything else goes through viem.
 */
export async function readSignedTransaction(bytes: Uint8Array): Promise<SignedTransactionFacts> {
  const raw = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hash = keccak256(raw);
  const plain = binding ? readPlainEip1559(binding, raw) : undefined;
  if (plain) return { hash, ...plain };
  const serialized: Hex = `0x${raw.toString("hex")}`;
  const parsed = parseTransaction(serialized);
  const from = recoverSenderNatively(parsed) ?? (await recoverTransactionAddress({ serializedTransaction: serialized as TransactionSerialized }));
  return {
    hash,
    from,
    nonce: parsed.nonce ?? 0,
    to: parsed.to ?? undefined,
    input: Buffer.from((parsed.data ?? "0x").slice(2), "hex"),
    maxFeePerGas: parsed.maxFeePerGas ?? 0n,
    maxPriorityFeePerGas: parsed.maxPriorityFeePerGas ?? 0n,
  };
}

/** One RLP item of `raw` at `at`: where its payload starts and ends, and whether it is a list. */
function rlpItem(raw: Buffer, at: number): { start: number; end: number; list: boolean } | undefined {
  const prefix = raw[at];
  if (prefix === undefined) return undefined;
  let start = at + 1;
  let length: number;
  if (prefix < 0x80) return { start: at, end: at + 1, list: false };
  if (prefix <= 0xb7 || (prefix >= 0xc0 && prefix <= 0xf7)) length = prefix - (prefix < 0xc0 ? 0x80 : 0xc0);
  else {
    const lengthBytes = prefix - (prefix < 0xc0 ? 0xb7 : 0xf7);
    if (lengthBytes > 4 || start + lengthBytes > raw.length) return undefined;
    length = raw.readUIntBE(start, lengthBytes);
    start += lengthBytes;
  }
  const end = start + length;
  return end <= raw.length ? { start, end, list: prefix >= 0xc0 } : undefined;
}

/** A canonical RLP integer (no leading zero byte) as a bigint; undefined otherwise. */
function integerOf(raw: Buffer, item: { start: number; end: number; list: boolean }): bigint | undefined {
  if (item.list || item.end - item.start > 32 || (item.end > item.start && raw[item.start] === 0)) return undefined;
  return item.end === item.start ? 0n : BigInt(`0x${raw.toString("hex", item.start, item.end)}`);
}

function readPlainEip1559(secp256k1: typeof Secp256k1, raw: Buffer): Omit<SignedTransactionFacts, "hash"> | undefined {
  if (raw[0] !== 0x02) return undefined;
  const outer = rlpItem(raw, 1);
  if (!outer?.list || outer.end !== raw.length) return undefined;
  const items: { start: number; end: number; list: boolean }[] = [];
  for (let at = outer.start; at < outer.end; at = items.at(-1)!.end) {
    const item = rlpItem(raw, at);
    if (!item || item.end > outer.end) return undefined;
    items.push(item);
  }
  if (items.length !== 12) return undefined;
  const [, nonceItem, priorityItem, feeItem, , toItem, , dataItem, accessListItem, parityItem, rItem, sItem] = items as [typeof outer, ...(typeof outer)[]];
  const [nonce, maxPriorityFeePerGas, maxFeePerGas, parity, r, s] = [nonceItem, priorityItem, feeItem, parityItem, rItem, sItem].map((item) => integerOf(raw, item!));
  if (nonce === undefined || nonce > BigInt(Number.MAX_SAFE_INTEGER) || maxPriorityFeePerGas === undefined || maxFeePerGas === undefined) return undefined;
  if ((parity !== 0n && parity !== 1n) || !r || !s || toItem!.list || dataItem!.list) return undefined;
  if (!accessListItem!.list || accessListItem!.end !== accessListItem!.start) return undefined;
  const toLength = toItem!.end - toItem!.start;
  if (toLength !== 0 && toLength !== 20) return undefined;
  // The signing payload: the first nine fields in a list of their own, after the type byte. Its
  // type byte and list prefix are written over the end of the signed transaction's own (no longer
  // than they are) while it is hashed, and put back: the calldata is not copied.
  const fieldsEnd = accessListItem!.end;
  const prefix = rlpLength(fieldsEnd - outer.start, 0xc0);
  const start = outer.start - 1 - prefix.length;
  const header = Buffer.from(raw.subarray(start, outer.start));
  raw[start] = 0x02;
  prefix.copy(raw, start + 1);
  const digest = keccak256Bytes(raw.subarray(start, fieldsEnd));
  header.copy(raw, start);
  const signature = Buffer.from(`${r.toString(16).padStart(64, "0")}${s.toString(16).padStart(64, "0")}`, "hex");
  let key: Uint8Array;
  try {
    key = secp256k1.ecdsaRecover(signature, Number(parity), digest, false).subarray(1);
  } catch {
    return undefined;
  }
  const addressHash = keccak256Bytes(key);
  return {
    from: getAddress(`0x${Buffer.from(addressHash.buffer, addressHash.byteOffset + 12, 20).toString("hex")}`),
    nonce: Number(nonce),
    to: toLength === 0 ? undefined : `0x${raw.toString("hex", toItem!.start, toItem!.end)}`,
    input: raw.subarray(dataItem!.start, dataItem!.end),
    maxFeePerGas,
    maxPriorityFeePerGas,
  };
}
