import { type Hex, isHex, size } from "viem";

/** secp256k1's group order n: a private key is an integer from 1 to n − 1. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * What is wrong with `key` as a secp256k1 private key, as the end of a sentence naming it
 * ("is not a 0x-prefixed 32-byte hex private key", "is out of range…"), or undefined when it is
 * one. Never repeats the key: viem's own error prints it in decimal.
 */
export function privateKeyProblem(key: unknown): string | undefined {
  if (typeof key !== "string" || !isHex(key, { strict: true }) || size(key as Hex) !== 32)
    return "is not a 0x-prefixed 32-byte hex private key";
  const value = BigInt(key);
  if (value === 0n || value >= SECP256K1_N)
    return "is out of range: a secp256k1 private key is from 1 to the curve order n − 1";
  return undefined;
}
