import { getAddress, type Hex, keccak256, type Signature, type TransactionSerializable, toHex, serializeTransaction as viemSerializeTransaction } from "viem";
import { describe, expect, it } from "vitest";
import { outcome } from "../../test/outcome.ts";
import { randomDraws } from "../../test/random-operations.ts";
import { serializeSigned, serializeTransaction } from "./serialize-transaction.ts";

describe("serializeTransaction", () => {
  it("writes what viem writes, signed and unsigned, for 3,000 random transactions", () => {
    const r = randomDraws(3);
    const pick = <T,>(...values: T[]) => values[r.int(values.length)]!;
    for (let i = 0; i < 3_000; i++) {
      const to = pick(r.address(), getAddress(r.address()), undefined, null, `0x${getAddress(r.address()).slice(2).split("").reverse().join("")}` as Hex);
      const transaction = {
        type: pick("eip1559", "eip1559", "eip1559", "eip2930", "legacy"),
        chainId: pick(1, 31337, 1 + r.int(2 ** 30), 0),
        nonce: pick(0, undefined, r.int(2 ** 31)),
        gas: pick(0n, undefined, r.uint(64)),
        maxFeePerGas: pick(r.uint(128), 0n, undefined),
        maxPriorityFeePerGas: pick(r.uint(64), 0n, undefined),
        gasPrice: undefined as bigint | undefined,
        value: pick(0n, undefined, r.uint(128), 1n << 256n),
        to,
        data: pick(r.bytes(r.int(i % 50 === 0 ? 40_000 : 600)), "0x", undefined, `0x${r.bytes(1 + r.int(40)).slice(2).toUpperCase()}` as Hex, "0xabc" as Hex),
        accessList: pick(undefined, [], [{ address: r.address(), storageKeys: [r.bytes(32)] }]),
      } as TransactionSerializable;
      if (transaction.type !== "eip1559") {
        transaction.gasPrice = transaction.maxFeePerGas;
        delete transaction.maxFeePerGas;
        delete transaction.maxPriorityFeePerGas;
      }
      const signature: Signature | undefined = pick(undefined, {
        r: pick(r.bytes(32), `0x${"00".repeat(3)}${r.bytes(29).slice(2)}` as Hex, `0x${"00".repeat(32)}` as Hex),
        s: r.bytes(32),
        ...pick({ yParity: r.int(2) }, { v: pick(27n, 28n, 0n, 1n) }),
      });
      expect(outcome(() => serializeTransaction(transaction, signature)), `transaction ${i}`).toBe(
        outcome(() => viemSerializeTransaction(transaction, signature)),
      );
      // As a signer serializes it: the payload it hashes and signs, then the transaction with the signature, as bytes.
      if (signature) {
        const digests: Hex[] = [];
        const sign = (digest: Uint8Array) => {
          digests.push(toHex(digest));
          return signature;
        };
        const signed = outcome(() => toHex(serializeSigned(transaction, sign)));
        expect(signed, `signed ${i}`).toBe(outcome(() => viemSerializeTransaction(transaction, signature)));
        if (typeof signed !== "string" || !signed.startsWith("0x")) continue;
        expect(digests, `digest ${i}`).toEqual([keccak256(viemSerializeTransaction(transaction))]);
      }
    }
  });
});
