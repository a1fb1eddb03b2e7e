import { type Address, InvalidAddressError } from "viem";
import { keccak256Bytes } from "./keccak.ts";

const addressPattern = /^0x[0-9a-fA-F]{40}$/;

/**
 * viem's `getAddress` (EIP-55, no chain id): the checksummed form of a 20-byte hex address in any
 * letter case, or viem's `InvalidAddressError`. Its checksum is hashed with the native keccak and
 * nothing is cached: the engine checksums every operation's entities several times on its way,
 * and viem's JavaScript keccak and the bookkeeping of its bounded caches cost more than the hash.
 */
export function getAddress(address: string): Address {
  if (!addressPattern.test(address)) throw new InvalidAddressError({ address });
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256Bytes(Buffer.from(lower, "latin1"));
  let checksummed = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    const digit = lower[i]!;
    checksummed += nibble >= 8 && digit > "9" ? digit.toUpperCase() : digit;
  }
  return checksummed as Address;
}
