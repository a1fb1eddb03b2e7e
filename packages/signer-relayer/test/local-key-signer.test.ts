import { type Hex, keccak256, parseTransaction, recoverTransactionAddress, type TransactionSerializable, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createLocalKeySigner, InvalidRelayerKeyError } from "../src/index.ts";

describe("createLocalKeySigner", () => {
  const keys = [generatePrivateKey(), generatePrivateKey()];

  it("exposes the relayer addresses, never the keys", () => {
    const signer = createLocalKeySigner(keys);
    expect(signer.addresses).toEqual(keys.map((k) => privateKeyToAddress(k)));
    expect(JSON.stringify(signer)).not.toContain(keys[0]!.slice(2));
  });

  it("leases each relayer to one holder at a time", () => {
    const signer = createLocalKeySigner(keys);
    const a = signer.lease()!;
    const b = signer.lease()!;
    expect(a.address).not.toBe(b.address);
    expect(signer.lease()).toBeUndefined();
    a.release();
    a.release();
    expect(signer.lease()?.address).toBe(a.address);
    expect(signer.lease()).toBeUndefined();
  });

  it("signs transactions recoverable to the leased relayer", async () => {
    const lease = createLocalKeySigner(keys).lease()!;
    const signed = await lease.signTransaction({
      type: "eip1559",
      chainId: 31337,
      to: lease.address,
      nonce: 0,
      gas: 21000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    const serialized = typeof signed === "string" ? signed : signed.serialized;
    expect(parseTransaction(serialized).chainId).toBe(31337);
    expect(await recoverTransactionAddress({ serializedTransaction: serialized as never })).toBe(lease.address);
  });

  it("signs exactly as viem's account does, on random transactions of every type", async () => {
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    const hex = (bytes: number): Hex => `0x${Array.from({ length: bytes }, () => random(256).toString(16).padStart(2, "0")).join("")}`;
    const lease = createLocalKeySigner([keys[0]!]).lease()!;
    const account = privateKeyToAccount(keys[0]!);
    for (let i = 0; i < 60; i++) {
      const common = { chainId: 1 + random(100_000), to: hex(20), nonce: random(1000), gas: BigInt(21_000 + random(30_000_000)), data: hex(random(4) === 0 ? 0 : random(40_000)), value: BigInt(random(3)) };
      const fees = { maxFeePerGas: BigInt(random(2 ** 30)) * 1000n, maxPriorityFeePerGas: BigInt(random(2 ** 20)) };
      const accessList = random(2) ? [{ address: hex(20), storageKeys: [hex(32), hex(32)] }] : undefined;
      const transaction: TransactionSerializable = [
        { ...common, ...fees, type: "eip1559" as const, ...(accessList ? { accessList } : {}) },
        { ...common, gasPrice: fees.maxFeePerGas, type: "legacy" as const },
        { ...common, gasPrice: fees.maxFeePerGas, type: "eip2930" as const, accessList: accessList ?? [] },
        { ...common, ...fees, type: "eip7702" as const, authorizationList: [{ address: hex(20), chainId: 1, nonce: random(9), r: hex(32), s: hex(32), yParity: random(2) }] },
      ][i % 4]!;
      // The hex a viem account writes, the same bytes, and their hash.
      const expected = await account.signTransaction(transaction);
      const signed = await lease.signTransaction(transaction);
      if (typeof signed === "string") throw new Error("the local key signer hands back bytes and hash");
      expect(signed.serialized).toBe(expected);
      expect(toHex(signed.bytes)).toBe(expected);
      expect(signed.hash).toBe(keccak256(expected));
    }
  });

  it("rejects malformed keys without echoing them", () => {
    const secretLooking = keys[1]!.slice(0, 60);
    for (const bad of ["0x1234", "not-hex", `0x${"zz".repeat(32)}`, keys[0]!.slice(2), secretLooking]) {
      const error = (() => {
        try {
          createLocalKeySigner([bad]);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(InvalidRelayerKeyError);
      expect(error!.message).not.toContain(bad.slice(2, 20));
    }
    expect(() => createLocalKeySigner([])).toThrow(/at least one/);
    expect(() => createLocalKeySigner([keys[0]!, keys[0]!])).toThrow(/distinct/);
  });

  it("rejects a key out of secp256k1's range (0, or n and above) by position, neither in hex nor in decimal", () => {
    const n = "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";
    for (const bad of [`0x${"00".repeat(32)}`, n, `0x${"ff".repeat(32)}`]) {
      const error = (() => {
        try {
          createLocalKeySigner([keys[0]!, bad]);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(InvalidRelayerKeyError);
      expect(error!.message).toBe("relayer key #2 is out of range: a secp256k1 private key is from 1 to the curve order n − 1");
      expect(error!.message).not.toContain(BigInt(bad).toString().slice(0, 12));
    }
    // n − 1, the largest key, is one.
    expect(createLocalKeySigner([`0x${(BigInt(n) - 1n).toString(16)}`]).addresses).toHaveLength(1);
  });
});
