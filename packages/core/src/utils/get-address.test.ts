import { getAddress as viemGetAddress, InvalidAddressError } from "viem";
import { describe, expect, it } from "vitest";
import { randomDraws } from "../../test/random-operations.ts";
import { getAddress } from "./get-address.ts";

describe("getAddress", () => {
  it("checksums as viem does, for 3,000 random addresses in any letter case", () => {
    const r = randomDraws(1);
    for (let i = 0; i < 3_000; i++) {
      const lower = r.address();
      const casing = [lower, lower.toUpperCase().replace("0X", "0x"), viemGetAddress(lower), lower.replace(/[a-f]/g, (c) => (r.int(2) ? c.toUpperCase() : c))][i % 4]!;
      expect(getAddress(casing), casing).toBe(viemGetAddress(casing));
    }
  });

  it("refuses what is not a 20-byte hex address with viem's error", () => {
    for (const bad of ["0x", "0x1234", `0x${"g".repeat(40)}`, `${"a".repeat(42)}`, `0x${"a".repeat(41)}`, `0x${"a".repeat(39)}`]) {
      expect(() => getAddress(bad), bad).toThrow(InvalidAddressError);
      expect(() => viemGetAddress(bad), bad).toThrow(InvalidAddressError);
    }
  });
});
