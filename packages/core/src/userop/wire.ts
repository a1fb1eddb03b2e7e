import type { Address, Hex } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { InvalidParamsError } from "../errors/errors.ts";

/**
 * Parsers for the wire forms of JSON-RPC values. Each takes the raw JSON value and the field's
 * path, and throws `InvalidParamsError` naming the field and what is wrong with it.
 */

const hexBody = /^[0-9a-fA-F]*$/;

/** True when the value is JSON-absent: missing or an explicit `null`. */
export function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? `"${value.length > 20 ? value.slice(0, 20) + "…" : value}"` : `${typeof value === "object" ? "an" : "a"} ${typeof value}`;
}

/**
 * A non-negative integer: a `0x` hex string or a `{type:"BigNumber",hex}` object, at most
 * `bits` wide.
 */
export function parseQuantity(value: unknown, field: string, bits = 256): bigint {
  let hex = value;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    if (object.type !== "BigNumber" || typeof object.hex !== "string") {
      throw new InvalidParamsError(field, 'expected a hex string or {type:"BigNumber",hex}');
    }
    hex = object.hex;
  }
  if (typeof hex !== "string" || !hex.startsWith("0x")) {
    throw new InvalidParamsError(field, `expected a 0x-prefixed hex quantity, got ${describe(hex)}`);
  }
  const digits = hex.slice(2);
  if (digits.length === 0 || !hexBody.test(digits)) {
    throw new InvalidParamsError(field, `"${hex.slice(0, 24)}" is not a hex quantity`);
  }
  const significant = digits.replace(/^0+/, "");
  if (significant.length * 4 > bits + 3 || (significant.length > 0 && BigInt(hex) >> BigInt(bits) !== 0n)) {
    throw new InvalidParamsError(field, `value does not fit in ${bits} bits`);
  }
  return BigInt(hex);
}

/** A byte string: `0x` followed by an even number of hex digits, at most `maxBytes` long. */
export function parseBytes(value: unknown, field: string, maxBytes = 256 * 1024): Hex {
  if (typeof value !== "string" || !value.startsWith("0x")) {
    throw new InvalidParamsError(field, `expected 0x-prefixed hex bytes, got ${describe(value)}`);
  }
  const digits = value.slice(2);
  if (!hexBody.test(digits)) throw new InvalidParamsError(field, "contains non-hex characters");
  if (digits.length % 2 !== 0) throw new InvalidParamsError(field, "has an odd number of hex digits");
  if (digits.length / 2 > maxBytes) {
    throw new InvalidParamsError(field, `is ${digits.length / 2} bytes, more than the limit of ${maxBytes}`);
  }
  // Kept as sent (letter case included): lookups and dumps give operations back exactly as submitted.
  return value as Hex;
}

/** A 20-byte address, returned checksummed. */
export function parseAddress(value: unknown, field: string): Address {
  const bytes = parseBytes(value, field);
  if (bytes.length !== 42) {
    throw new InvalidParamsError(field, `expected a 20-byte address, got ${(bytes.length - 2) / 2} bytes`);
  }
  return getAddress(bytes);
}

/** A 32-byte hash, lower case (the form hashes are stored and compared in). */
export function parseHash(value: unknown, field: string): Hex {
  const bytes = parseBytes(value, field);
  if (bytes.length !== 66) {
    throw new InvalidParamsError(field, `expected a 32-byte hash, got ${(bytes.length - 2) / 2} bytes`);
  }
  return bytes.toLowerCase() as Hex;
}

/** A JSON object (not an array, not null). */
export function parseObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidParamsError(field, `expected an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Lower-case `0x` hex of a non-negative integer, as responses carry it. */
export function toQuantity(value: bigint | number): Hex {
  return `0x${value.toString(16)}`;
}

/**
 * A non-negative integer written in decimal (`"10"`), as a hex quantity (`"0xa"`) or as a JSON
 * number; `bundler_feeHistory`'s block count comes as a decimal string.
 */
export function parseInteger(value: unknown, field: string): bigint {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === "string" && /^[0-9]{1,78}$/.test(value)) return BigInt(value);
  if (typeof value === "string" && value.startsWith("0x")) return parseQuantity(value, field);
  throw new InvalidParamsError(field, `expected a non-negative integer (decimal string, hex quantity or number), got ${describe(value)}`);
}

const blockTags = ["latest", "earliest", "pending", "safe", "finalized"] as const;

/** A block: a tag (`latest`, `earliest`, `pending`, `safe`, `finalized`) or a number. */
export function parseBlock(value: unknown, field: string): bigint | (typeof blockTags)[number] {
  if (typeof value === "string" && (blockTags as readonly string[]).includes(value)) return value as (typeof blockTags)[number];
  if (typeof value === "string" || typeof value === "number") {
    try {
      return parseInteger(value, field);
    } catch {
      // fall through to the block-specific message
    }
  }
  throw new InvalidParamsError(field, `expected a block tag (${blockTags.join(", ")}) or a block number, got ${describe(value)}`);
}
