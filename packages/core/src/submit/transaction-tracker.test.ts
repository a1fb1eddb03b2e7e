import { type Address, type Hash, type Hex, pad } from "viem";
import { describe, expect, it } from "vitest";
import { fixtureEntry, fixtureFactory, fixturePaymaster, replacingNothing } from "../../../testing/src/index.ts";
import type { RpcMinedLog, RpcMinedReceipt } from "../chain/get-transaction-receipt.ts";
import { createMemoryMempoolStore } from "../mempool/memory-mempool-store.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { silentLogger } from "../ports/logger.ts";
import { ignoredInitCodeTopic, userOperationEventTopic } from "../receipt/user-operation-event.ts";
import type { SentBundle } from "./send-bundle.ts";
import { createTransactionTracker, type TransactionTrackerParameters } from "./transaction-tracker.ts";

/**
 * The tracker with the node faked at its port: it answers one receipt for the watched
 * transaction. The store is the real one in memory.
 */
const transactionHash = `0x${"ab".repeat(32)}` as Hash;
const blockHash = `0x${"cd".repeat(32)}` as Hash;
const now = 1_750_000_000_000;

function log(address: Address, topics: Hex[], data: Hex): RpcMinedLog {
  return { address, topics: topics as RpcMinedLog["topics"], data, blockHash, blockNumber: "0x7", transactionHash, transactionIndex: "0x0", logIndex: "0x0", removed: false };
}

/** A `UserOperationEvent` of a successful operation. */
function userOperationEvent(entryPoint: Address, userOpHash: Hash, sender: Address): RpcMinedLog {
  const data = `0x${[0n, 1n, 10n ** 15n, 100_000n].map((word) => word.toString(16).padStart(64, "0")).join("")}` as Hex;
  return log(entryPoint, [userOperationEventTopic, userOpHash, pad(sender), pad(fixturePaymaster)], data);
}

/** v0.9's `IgnoredInitCode(userOpHash, sender, factory)`. */
function ignoredInitCode(emitter: Address, userOpHash: Hash, sender: Address): RpcMinedLog {
  return log(emitter, [ignoredInitCodeTopic, userOpHash, pad(sender), pad(fixtureFactory)], "0x");
}

/** A port the tracker has no reason to call here. */
function notAsked(method: string): never {
  throw new Error(`${method} was not expected`);
}

/** The tracker on `client`, with the ports it has no reason to call here refusing. */
function trackerOn(client: ChainClient, store: MempoolStore, onIncluded?: TransactionTrackerParameters["onIncluded"]) {
  return createTransactionTracker({
    client,
    chainId: 11155111,
    store,
    submitter: { name: "classic", submit: () => notAsked("submit") },
    clock: { now: () => now, setTimeout: () => notAsked("setTimeout") },
    logger: silentLogger,
    emit: () => {},
    gasLimitMarkupPercent: 0,
    feeOracle: { getGasPrice: () => notAsked("getGasPrice") },
    settings: { replaceAfterBlocks: 3, feeBumpPercent: 15, maxAttempts: 3, reorgDepth: 12 },
    maxFeePerGas: undefined,
    claimant: "engine-1",
    claimLeaseMs: 60_000,
    onIncluded,
    preconfirmations: { get: () => notAsked("get"), settle: () => notAsked("settle") },
  });
}

describe("transaction tracker, on a receipt", () => {
  it("tells reputation which included operations' factories the EntryPoint ignored (IgnoredInitCode), each by its own event from that EntryPoint", async () => {
    const store = createMemoryMempoolStore();
    const [counted, ignored, elsewhere] = await Promise.all([1, 2, 3].map((sender) => fixtureEntry({ version: "0.9", sponsored: true, sender })));
    const entries = [counted!, ignored!, elsewhere!];
    for (const entry of entries) await store.admit(entry, replacingNothing);
    const hashes = entries.map((e) => e.userOpHash);
    await store.markSubmitted(hashes, transactionHash, now);
    const entryPoint = counted!.entryPoint;
    // The node answers the EntryPoint's address in lower case; another contract emits an event of the same shape.
    const emitter = entryPoint.toLowerCase() as Address;
    const other = "0x1111111111111111111111111111111111111111";
    const receipt = {
      transactionHash,
      blockHash,
      blockNumber: "0x7",
      status: "0x1",
      logs: [
        ignoredInitCode(emitter, ignored!.userOpHash, ignored!.userOperation.sender),
        ignoredInitCode(other, elsewhere!.userOpHash, elsewhere!.userOperation.sender),
        ...entries.map((e) => userOperationEvent(emitter, e.userOpHash, e.userOperation.sender)),
      ],
    } as unknown as RpcMinedReceipt;
    const client = {
      request: async ({ method }: { method: string }) => (method === "eth_getTransactionReceipt" ? receipt : null),
    } as unknown as ChainClient;
    const factoryIgnored: Record<Hash, boolean | undefined> = {};
    const tracker = trackerOn(client, store, async (_, op, facts) => {
      factoryIgnored[entries.find((e) => e.userOperation.sender === op.sender)!.userOpHash] = facts?.factoryIgnored;
    });

    tracker.watch(transactionHash, await Promise.all(hashes.map(async (hash) => (await store.get(hash))!)));
    await tracker.onBlock({ number: 7n, hash: blockHash, timestamp: 1n, baseFeePerGas: 1n, gasLimit: 30_000_000n });

    expect(factoryIgnored).toEqual({ [counted!.userOpHash]: false, [ignored!.userOpHash]: true, [elsewhere!.userOpHash]: false });
    for (const hash of hashes) expect((await store.get(hash))?.status).toBe("included");
  });
});

describe("transaction tracker, on a chain that mines on demand", () => {
  it("follows a bundle to its receipt when the block that mined it came while it was being sent: no later block is needed", async () => {
    const store = createMemoryMempoolStore();
    const entry = await fixtureEntry({ version: "0.8" });
    await store.admit(entry, replacingNothing);
    await store.markSubmitted([entry.userOpHash], transactionHash, now);
    const receipt = {
      transactionHash,
      blockHash,
      blockNumber: "0x7",
      status: "0x1",
      logs: [userOperationEvent(entry.entryPoint, entry.userOpHash, entry.userOperation.sender)],
    } as unknown as RpcMinedReceipt;
    const client = {
      request: async ({ method }: { method: string }) => (method === "eth_getTransactionReceipt" ? receipt : null),
      getTransactionCount: async () => 1,
    } as unknown as ChainClient;
    const tracker = trackerOn(client, store);
    let released = false;
    const sent = {
      bundle: { entryPoint: { address: entry.entryPoint }, entries: [entry] },
      relayer: { address: "0x2222222222222222222222222222222222222222", release: () => (released = true) },
      transaction: { nonce: 0 },
      transactionHashes: [transactionHash],
      sentAtBlock: 6n,
      cancelled: false,
    } as unknown as SentBundle;

    // Block 7 (which mined the bundle) is followed before the engine hands the sent bundle over.
    await tracker.onBlock({ number: 7n, hash: blockHash, timestamp: 1n, baseFeePerGas: 1n, gasLimit: 30_000_000n });
    tracker.track(sent);
    await tracker.settled(transactionHash);

    expect((await store.get(entry.userOpHash))?.status).toBe("included");
    expect(released).toBe(true);
  });
});
