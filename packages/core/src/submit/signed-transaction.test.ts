import { keccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { randomDraws } from "../../test/random-operations.ts";
import { signedTransaction, toSignedTransaction } from "./signed-transaction.ts";

describe("signed transactions as the engine carries them", () => {
  it("hold the same bytes as hex and as bytes, and their hash, from either form", () => {
    const r = randomDraws(5);
    for (let i = 0; i < 200; i++) {
      const hex = r.bytes(r.int(i % 10 === 0 ? 40_000 : 300));
      const bytes = Buffer.from(hex.slice(2), "hex");
      for (const signed of [toSignedTransaction(hex), signedTransaction(bytes), toSignedTransaction(signedTransaction(bytes))]) {
        expect(signed.serialized, `transaction ${i}`).toBe(hex);
        expect(Buffer.from(signed.bytes).equals(bytes), `transaction ${i}`).toBe(true);
        expect(signed.hash, `transaction ${i}`).toBe(keccak256(hex));
      }
    }
  });

  it("keep a hash they are given", () => {
    const hash = keccak256("0x01");
    expect(signedTransaction(Buffer.from([2]), hash).hash).toBe(hash);
  });
});
