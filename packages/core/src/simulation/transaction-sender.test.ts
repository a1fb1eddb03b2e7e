import {
  type Hex,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerializable,
  type TransactionSerialized,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { randomDraws } from "../../test/random-operations.ts";
import { readSignedTransaction, recoverSenderNatively } from "./transaction-sender.ts";

describe("recoverSenderNatively", () => {
  it("recovers the signer viem recovers, from EIP-1559 and EIP-155 legacy transactions of many keys", async () => {
    for (let i = 1; i <= 40; i++) {
      const account = privateKeyToAccount(toHex(i * 7919, { size: 32 }));
      const common = {
        chainId: 31337,
        nonce: i,
        gas: 100_000n + BigInt(i),
        to: account.address,
        data: toHex(i, { size: i }),
      } as const;
      const signed =
        i % 4 === 0
          ? await account.signTransaction({ ...common, type: "legacy", gasPrice: 10n ** 9n })
          : await account.signTransaction({
              ...common,
              type: "eip1559",
              maxFeePerGas: 10n ** 9n * BigInt(i),
              maxPriorityFeePerGas: BigInt(i),
            });
      const sender = recoverSenderNatively(parseTransaction(signed));
      const viemSender = await recoverTransactionAddress({
        serializedTransaction: signed as TransactionSerialized,
      });
      expect(viemSender).toBe(account.address);
      expect(sender, `transaction ${i}`).toBe(viemSender);
    }
  });
});

describe("readSignedTransaction", () => {
  it("reads the hash, sender and fields viem parses and recovers, for 400 random signed transactions of every type", async () => {
    const r = randomDraws(4);
    for (let i = 0; i < 400; i++) {
      const account = privateKeyToAccount(toHex(1 + r.int(2 ** 40), { size: 32 }));
      const common = { chainId: 1 + r.int(100_000), nonce: [0, r.int(2 ** 31)][r.int(2)]!, gas: r.uint(64), to: [r.address(), undefined][r.int(5) === 0 ? 1 : 0], data: r.bytes(r.int(3) === 0 ? 0 : r.int(i % 20 === 0 ? 40_000 : 300)), value: r.uint(64) };
      const fees = { maxFeePerGas: r.uint(128) + 1n, maxPriorityFeePerGas: 0n };
      fees.maxPriorityFeePerGas = fees.maxFeePerGas / BigInt(1 + r.int(5));
      const transaction: TransactionSerializable = [
        { ...common, ...fees, type: "eip1559" as const },
        { ...common, ...fees, type: "eip1559" as const },
        { ...common, ...fees, type: "eip1559" as const, accessList: [{ address: r.address(), storageKeys: [r.bytes(32)] }] },
        { ...common, gasPrice: fees.maxFeePerGas, type: "legacy" as const },
      ][i % 4]!;
      const signed = await account.signTransaction(transaction);
      const parsed = parseTransaction(signed);
      const bytes = Buffer.from(signed.slice(2), "hex");
      const { input, ...facts } = await readSignedTransaction(bytes);
      expect(bytes.toString("hex"), `transaction ${i}'s bytes, left as they were`).toBe(signed.slice(2));
      expect({ ...facts, data: toHex(input) }, `transaction ${i}`).toEqual({
        hash: keccak256(signed),
        from: await recoverTransactionAddress({ serializedTransaction: signed as TransactionSerialized }),
        nonce: parsed.nonce ?? 0,
        to: parsed.to ?? undefined,
        data: parsed.data ?? "0x",
        maxFeePerGas: parsed.maxFeePerGas ?? 0n,
        maxPriorityFeePerGas: parsed.maxPriorityFeePerGas ?? 0n,
      });
    }
  });

  it("leaves RLP it does not plainly read to viem, which refuses it", async () => {
    const account = privateKeyToAccount(toHex(5, { size: 32 }));
    const signed = await account.signTransaction({ type: "eip1559", chainId: 1, nonce: 1, gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, to: account.address });
    for (const bad of [signed.slice(0, -2), `${signed}00`, `0x02c0`] as Hex[]) {
      await expect(readSignedTransaction(Buffer.from(bad.slice(2), "hex")), bad.slice(0, 20)).rejects.toThrow();
    }
  });
});
