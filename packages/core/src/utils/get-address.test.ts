import { getAddress as viemGetAddress, InvalidAddressError, isAddress as viemIsAddress } from "viem";
import { describe, expect, it } from "vitest";
import { randomDraws } from "../../test/random-operations.ts";
import { getAddress, getAddressAt, isAddress } from "./get-address.ts";

/** 3,000 random addresses, in turn lower case, upper case, checksummed and in mixed case. */
function randomCasings(seed: number): string[] {
  const r = randomDraws(seed);
  return Array.from({ length: 3_000 }, (_, i) => {
    const lower = r.address();
    return [lower, lower.toUpperCase().replace("0X", "0x"), viemGetAddress(lower), lower.replace(/[a-f]/g, (c) => (r.int(2) ? c.toUpperCase() : c))][i % 4]!;
  });
}

describe("getAddress", () => {
  it("checksums as viem does, for 3,000 random addresses in any letter case", () => {
    for (const casing of randomCasings(1)) expect(getAddress(casing), casing).toBe(viemGetAddress(casing));
  });

  it("checksums an address asked again, or asked by its checksum or another casing right after, as viem does", () => {
    const r = randomDraws(4);
    for (let i = 0; i < 200; i++) {
      const lower = r.address();
      const checksum = viemGetAddress(lower);
      for (const casing of [lower, lower, checksum, checksum, lower.toUpperCase().replace("0X", "0x"), lower]) expect(getAddress(casing), casing).toBe(checksum);
    }
  });

  it("refuses what is not a 20-byte hex address with viem's error", () => {
    for (const bad of ["", "0x", "0x1234", `0x${"g".repeat(40)}`, `${"a".repeat(42)}`, `0x${"a".repeat(41)}`, `0x${"a".repeat(39)}`]) {
      expect(() => getAddress(bad), bad).toThrow(InvalidAddressError);
      expect(() => viemGetAddress(bad), bad).toThrow(InvalidAddressError);
    }
  });

  it("checksums the digits inside a longer string as viem does the address they spell, again and again (getAddressAt)", () => {
    const r = randomDraws(2);
    const topics = Array.from({ length: 500 }, (_, i) => {
      const lower = r.address();
      const digits = i % 2 ? lower.slice(2).toUpperCase() : lower.slice(2);
      return { topic: `0x${"0".repeat(24)}${digits}`, expected: viemGetAddress(lower) };
    });
    for (let round = 0; round < 3; round++) {
      for (const { topic, expected } of topics) expect(getAddressAt(topic, 26), topic).toBe(expected);
    }
  });

  it("tells apart two addresses whose digits make the same cache key (getAddressAt)", () => {
    // These two collide under the cache's key (31-fold over the lower-case digits, 30 bits).
    const first = "e0a35ab8de042357d343db7e6a33e993b4ea0daf";
    const second = "1c4d532beecf62d0f7c24054459be676b1efa44b";
    for (let round = 0; round < 3; round++) {
      expect(getAddressAt(`0x${first}`, 2)).toBe(viemGetAddress(`0x${first}`));
      expect(getAddressAt(`0x${second}`, 2)).toBe(viemGetAddress(`0x${second}`));
    }
  });

  it("tells an address as viem's isAddress does: lower case or checksummed, for 3,000 random ones in any letter case and malformed ones", () => {
    for (const casing of randomCasings(3)) expect(isAddress(casing), casing).toBe(viemIsAddress(casing));
    for (const bad of ["0x", "0x1234", `0x${"g".repeat(40)}`, `${"a".repeat(42)}`, `0x${"a".repeat(41)}`]) expect(isAddress(bad), bad).toBe(false);
  });
});
