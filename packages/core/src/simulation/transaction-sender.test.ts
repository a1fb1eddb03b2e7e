import {
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerialized,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { recoverSenderNatively } from "./transaction-sender.ts";

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
