import { type Address, type Hash, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { createEntryPointRegistry } from "../entrypoint/registry.ts";
import { createMemoryMempoolStore } from "../mempool/memory-mempool-store.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolEntry } from "../ports/mempool-store.ts";
import type { UserOperationV07 } from "../userop/types.ts";
import { proposeBundle } from "./propose-bundle.ts";

const entryPoint = createEntryPointRegistry().all.find((e) => e.version === "0.7")!;
const relayer: Address = "0x00000000000000000000000000000000000000aa";

/** An operation of `sender` at `nonce` that pays any base fee the test sets. */
const operation = (sender: Address, nonce: bigint): UserOperationV07 => ({
  sender,
  nonce,
  callData: "0x",
  callGasLimit: 50_000n,
  verificationGasLimit: 80_000n,
  preVerificationGas: 60_000n,
  maxFeePerGas: 10_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  signature: `0x${"11".repeat(65)}`,
});

/**
 * The operations (as `sender:nonce`) a proposal bundles from a pool holding nonces 0 to 2 of two
 * senders, when the policy chooses those `chosen` names: the store and the policy are the real
 * memory store and a stub, the bundle unsimulated (`skipValidation`), so nothing reaches the chain.
 */
async function bundled(chosen: readonly string[]): Promise<string[]> {
  const store = createMemoryMempoolStore();
  const senders: Address[] = ["0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222"];
  const nameOf = (e: MempoolEntry) => `${e.userOperation.sender.slice(0, 4)}:${e.userOperation.nonce}`;
  let hashes = 0;
  for (const sender of senders) {
    for (const nonce of [0n, 1n, 2n]) {
      const userOpHash = toHex(++hashes, { size: 32 }) as Hash;
      const entry = { userOpHash, entryPoint: entryPoint.address, entryPointVersion: entryPoint.version, userOperation: operation(sender, nonce), receivedAt: hashes };
      await store.admit(entry, () => ({ replaces: undefined }));
    }
  }
  const policy = {
    name: "chosen",
    admit: () => ({ replaces: undefined }),
    select: (candidates: readonly MempoolEntry[]) => candidates.filter((c) => chosen.includes(nameOf(c))),
  };
  const { bundle } = await proposeBundle(
    {
      client: {} as ChainClient,
      store,
      policy,
      claimant: "test",
      claimLeaseMs: 60_000,
      now: () => 1_000,
      getGasPrice: async () => ({ maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, baseFeePerGas: 1n }),
      settings: { maxCalldataBytes: 262_144, maxContextBytes: 65_536, skipValidation: true, accessList: false, maxFeePerGas: undefined, uniqueSenders: false },
    },
    {
      entryPoint,
      relayer,
      beneficiary: relayer,
      head: { number: 1n, hash: toHex(0, { size: 32 }), timestamp: 1n, baseFeePerGas: 1n, gasLimit: 30_000_000n },
      gasBudget: 10_000_000n,
      maxOperations: 10,
    },
  );
  return bundle?.entries.map(nameOf) ?? [];
}

describe("proposeBundle", () => {
  it("bundles a sender's operation only with the operation of the nonce before it, when that one is also a candidate", async () => {
    expect(await bundled(["0x11:0", "0x11:1", "0x11:2", "0x22:0", "0x22:1"])).toEqual(["0x11:0", "0x11:1", "0x11:2", "0x22:0", "0x22:1"]);
    // Nonce 2 without nonce 1, nonce 1 without nonce 0: each waits in the pool.
    expect(await bundled(["0x11:0", "0x11:2", "0x22:1", "0x22:2"])).toEqual(["0x11:0"]);
  });
});
