import { keccak256 as viemKeccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { keccak256 } from "./keccak.ts";

describe("keccak256", () => {
  it("equals viem's at every length around the sponge's 136-byte rate, and over a reused state", () => {
    for (const length of [0, 1, 31, 32, 33, 135, 136, 137, 271, 272, 273, 1000, 20_000]) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 7 + length) & 0xff);
      expect(keccak256(data), `${length} bytes`).toBe(viemKeccak256(data));
      expect(keccak256(data.subarray(1)), `${length} bytes, offset 1`).toBe(viemKeccak256(data.subarray(1)));
    }
  });
});
