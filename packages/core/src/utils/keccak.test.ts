import { keccak256 as viemKeccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { keccak256, keccak256Bytes, keccak256Hex, keccak256Into } from "./keccak.ts";

/** A deterministic pseudo-random generator (xorshift32), so a failure names an input that can be rerun. */
function random(seed: number) {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

describe("keccak256", () => {
  it("equals viem's at every length around the sponge's 136-byte rate, and over a reused state", () => {
    for (const length of [0, 1, 31, 32, 33, 135, 136, 137, 271, 272, 273, 1000, 20_000]) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 7 + length) & 0xff);
      expect(keccak256(data), `${length} bytes`).toBe(viemKeccak256(data));
      expect(keccak256(data.subarray(1)), `${length} bytes, offset 1`).toBe(viemKeccak256(data.subarray(1)));
    }
  });

  it("equals viem's on random inputs of every size an engine hashes, in each of its forms", () => {
    const next = random(26);
    const target = new Uint8Array(80);
    for (let i = 0; i < 3000; i++) {
      // Mostly short (addresses, words, an operation's fields), now and then a bundle's calldata.
      const length = i % 100 === 0 ? Math.floor(next() * 40_000) : Math.floor(next() * 700);
      const data = Uint8Array.from({ length }, () => Math.floor(next() * 256));
      const expected = viemKeccak256(data);
      expect(keccak256(data), `${length} bytes (#${i})`).toBe(expected);
      const bytes = keccak256Bytes(data);
      expect(`0x${Buffer.from(bytes).toString("hex")}`, `${length} bytes (#${i})`).toBe(expected);
      const at = i % 48;
      keccak256Into(data, target, at);
      expect(`0x${Buffer.from(target.subarray(at, at + 32)).toString("hex")}`, `${length} bytes into ${at} (#${i})`).toBe(expected);
      expect(keccak256Hex(`0x${Buffer.from(data).toString("hex")}`), `${length} bytes as hex (#${i})`).toBe(expected);
    }
  });

  it("hands out arrays of their own: a later hash leaves an earlier one as it was", () => {
    const first = keccak256Bytes(Uint8Array.of(1));
    const kept = Uint8Array.from(first);
    keccak256Bytes(Uint8Array.of(2));
    expect(first).toEqual(kept);
  });

  it("grows its memory for an input past 64 KiB, and hashes short inputs as before after it", () => {
    const large = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 13) & 0xff);
    expect(keccak256(large)).toBe(viemKeccak256(large));
    expect(keccak256(Uint8Array.of(7, 8, 9))).toBe(viemKeccak256(Uint8Array.of(7, 8, 9)));
  });

  it("hashes a large input again from its bytes, not from what it was hashed as before: changed in place, or alike but for its last byte", () => {
    const large = Uint8Array.from({ length: 30_000 }, (_, i) => (i * 11) & 0xff);
    const before = viemKeccak256(large);
    expect(keccak256(large)).toBe(before);
    expect(keccak256(large)).toBe(before);
    large[29_999]! ^= 1;
    expect(keccak256(large)).toBe(viemKeccak256(large));
    expect(keccak256(large)).not.toBe(before);
    const twin = Uint8Array.from(large);
    twin[29_999]! ^= 1;
    expect(keccak256Bytes(twin)).toEqual(viemKeccak256(twin, "bytes"));
    expect(keccak256Bytes(large)).toEqual(viemKeccak256(large, "bytes"));
    const framed = new Uint8Array(30_002);
    framed.set(large, 1);
    expect(keccak256(framed.subarray(1, -1))).toBe(viemKeccak256(large));
  });

  it("hashes alike large inputs of other lengths, one after another, as viem does", () => {
    const large = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 5) & 0xff);
    for (let round = 0; round < 3; round++) {
      for (const length of [2047, 2048, 5000, 9999, 10_000, 4096, 2048]) {
        expect(keccak256(large.subarray(0, length)), `${length} bytes, round ${round}`).toBe(viemKeccak256(large.subarray(0, length)));
      }
    }
  });
});
