import { type Address, InvalidAddressError, zeroAddress } from "viem";
import { keccak256Bytes } from "./keccak.ts";

const addressPattern = /^0x[0-9a-fA-F]{40}$/;

/** 20 bytes of hex in any letter case, checksum unchecked: what may be written into a word as an address. */
export const isHexAddress = (value: string): boolean => addressPattern.test(value);

/**
 * viem's `getAddress` (EIP-55, no chain id): the checksummed form of a 20-byte hex address in any
 * letter case, or viem's `InvalidAddressError`. The engine checksums every operation's entities
 * several times on its way: here the checksum is hashed with the engine's keccak (`keccak.ts`), and
 * the last addresses seen are kept in a plain map emptied when full (viem's least-recently-used
 * cache moves an entry on every hit, which cost more than the hash). Where the digits are read
 * out of longer hex, `getAddressAt` looks them up without cutting them out.
 */
export function getAddress(address: string): Address {
  // The address asked last, or its checksum asked next (an operation's entities checksummed, then
  // looked up by their checksums): answered before the map, whose lookups miss the processor's caches.
  if (address === last.given || address === last.checksummed) return last.checksummed;
  let result = checksummed.get(address);
  if (!result) {
    if (!addressPattern.test(address)) throw new InvalidAddressError({ address });
    if (checksummed.size >= cacheSize) checksummed.clear();
    result = checksum(address);
    checksummed.set(address, result);
  }
  last.given = address;
  last.checksummed = result;
  return result;
}

/** The address `getAddress` answered last, as given and checksummed (at first the zero address). */
const last: { given: string; checksummed: Address } = { given: zeroAddress, checksummed: zeroAddress };

/**
 * viem's `isAddress` (strict, its default): 20 bytes of hex, in lower case or with their EIP-55
 * checksum. A checksum is looked up in `getAddress`'s cache: viem's keeps 8,192 addresses and
 * checksums with JavaScript keccak past them, which a pool of tens of thousands of senders with
 * checksummed addresses does on nearly every check.
 */
export function isAddress(address: string): boolean {
  if (lowerCaseAddress.test(address)) return true;
  return addressPattern.test(address) && getAddress(address) === address;
}

/** An address in lower case (or of digits only): valid without a checksum, and one test where most addresses are so. */
const lowerCaseAddress = /^0x[0-9a-f]{40}$/;

/** Addresses as given → checksummed. */
const checksummed = new Map<string, Address>();
const cacheSize = 65_536;

function checksum(address: string): Address {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256Bytes(Buffer.from(lower, "latin1"));
  let result = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    const digit = lower[i]!;
    result += nibble >= 8 && digit > "9" ? digit.toUpperCase() : digit;
  }
  return result as Address;
}

/**
 * The checksummed address of the 40 hex digits at `start` of `hex` (an event topic's last 20
 * bytes, say), as `getAddress` gives it, without cutting them out first: a string made afresh
 * must be hashed whole before a map can look it up, which costs several times reading its digits.
 * Cached by a number computed from the digits, and checked against them digit by digit.
 * The caller has checked they are hex digits.
 */
export function getAddressAt(hex: string, start: number): Address {
  let key = 0;
  for (let i = start; i < start + 40; i++) key = (Math.imul(key, 31) + (hex.charCodeAt(i) | 0x20)) | 0;
  key &= 0x3fffffff;
  const known = checksummedByKey.get(key);
  if (known && sameDigits(hex, start, known)) return known;
  const address = getAddress(`0x${hex.slice(start, start + 40)}`);
  if (checksummedByKey.size >= cacheSize) checksummedByKey.clear();
  checksummedByKey.set(key, address);
  return address;
}

/** Addresses by a number computed from their digits (`getAddressAt`); a colliding one replaces the other. */
const checksummedByKey = new Map<number, Address>();

/** Whether the 40 digits at `start` of `hex` are those of `address`, in any letter case. */
function sameDigits(hex: string, start: number, address: Address): boolean {
  for (let i = 0; i < 40; i++) if ((hex.charCodeAt(start + i) | 0x20) !== (address.charCodeAt(2 + i) | 0x20)) return false;
  return true;
}
