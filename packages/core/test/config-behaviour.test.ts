import {
  type Address,
  createPublicClient,
  custom,
  getAddress,
  type Hash,
  type Hex,
  keccak256,
  parseGwei,
  parseTransaction,
  recoverTransactionAddress,
  toHex,
} from "viem";
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import type { BundlerConfig } from "../src/engine/config.ts";
import { createBundler } from "../src/engine/create-bundler.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { MempoolStore } from "../src/ports/mempool-store.ts";
import type { Submitter } from "../src/ports/submitter.ts";
import { createSimulatedChain, type SimulatedDelivery } from "../src/simulation/simulated-chain.ts";
import { createSimulatedClock, type SimulatedClock } from "../src/simulation/simulated-clock.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { createMemoryMempoolStore } from "../src/testing/index.ts";
import type { UserOperationV07 } from "../src/userop/types.ts";
import { testSigner } from "./fixtures.ts";

/**
 * Each setting of the engine table (`BundlerConfig`, docs/configuration.md) changes what the
 * engine does; this file holds the settings no other test varies. Settings of time and of the
 * transaction tracker run the real engine on a simulated chain and clock.
 */

/** A synthetic v0.7 operation of sender `n`, paying up to 20 gwei per gas with a 1 gwei tip. */
function syntheticOperation(n: number): UserOperationV07 {
  return {
    sender: keccak256(toHex(`config sender ${n}`)).slice(0, 42) as Address,
    nonce: 0n,
    callData: "0x",
    callGasLimit: 50_000n,
    verificationGasLimit: 100_000n,
    preVerificationGas: 100_000n,
    maxFeePerGas: parseGwei("20"),
    maxPriorityFeePerGas: parseGwei("1"),
    signature: `0x${"11".repeat(65)}` as Hex,
  };
}

/** A transaction the engine handed to the chain, with the head it was handed over at. */
interface Sent {
  hash: Hash;
  from: Address;
  to: Address | undefined;
  value: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  atBlock: bigint;
}

interface SimulatedOptions {
  /** What becomes of each transaction. Default: mined in the next block. */
  delivery?: (transaction: { hash: Hash; sentAtBlock: bigint }) => SimulatedDelivery;
  /** Poll the chain's client for blocks on `blockPollingInterval` instead of being told of them. */
  pollForBlocks?: boolean;
  /** Never answer once the transaction is handed to the chain: the engine died there. */
  dieAfterSubmit?: boolean;
  /** Share these with another engine. */
  shared?: {
    clock: SimulatedClock;
    chain: ReturnType<typeof createSimulatedChain>;
    store: MempoolStore;
  };
  instanceId?: string;
}

/** The real engine on a simulated chain (a block every second) and clock, with `config` on top of a manual, unsafe-validation base. */
async function simulated(config: Partial<BundlerConfig>, options: SimulatedOptions = {}) {
  const clock = options.shared?.clock ?? createSimulatedClock(1_750_000_000_000);
  const chain =
    options.shared?.chain ??
    createSimulatedChain({ clock, blockTimeMs: 1_000, delivery: options.delivery });
  const store = options.shared?.store ?? createMemoryMempoolStore();
  const sent: Sent[] = [];
  const submitter: Submitter = {
    name: "simulated",
    async submit(signed) {
      const transaction = parseTransaction(signed);
      const hash = await chain.submitter.submit(signed);
      sent.push({
        hash,
        from: await recoverTransactionAddress({ serializedTransaction: signed as never }),
        to: transaction.to ? getAddress(transaction.to) : undefined,
        value: transaction.value ?? 0n,
        maxFeePerGas: transaction.maxFeePerGas!,
        maxPriorityFeePerGas: transaction.maxPriorityFeePerGas!,
        atBlock: chain.head().number,
      });
      return options.dieAfterSubmit ? new Promise<Hash>(() => {}) : hash;
    },
  };
  const requests: string[] = [];
  // The chain's client, recording what the engine asks (at the ChainClient port).
  const client = createPublicClient({
    transport: custom({
      request: (args: { method: string }) => {
        requests.push(args.method);
        return chain.client.request(args as never);
      },
    }),
    cacheTime: 0,
  }) as ChainClient;
  const bundler = await createBundler({
    client: options.pollForBlocks ? client : chain.client,
    store,
    signer: testSigner([generatePrivateKey(), generatePrivateKey()]),
    submitter,
    ...(options.pollForBlocks ? {} : { blocks: chain.blocks }),
    clock,
    instanceId: options.instanceId,
    entryPoints: [chain.entryPoint],
    // The simulated chain runs no EVM to trace: validation is simulation only.
    config: { validationMode: "unsafe", minSignerBalance: 0n, bundlingMode: "manual", ...config },
  });
  const changes: StatusChange[] = [];
  bundler.onStatusChange((c) => changes.push(c));
  return {
    clock,
    chain,
    store,
    bundler,
    sent,
    requests,
    send: (n: number) => bundler.sendUserOperation(syntheticOperation(n), chain.entryPoint.address),
    statuses: (hash: Hash) => changes.filter((c) => c.userOpHash === hash).map((c) => c.status),
    changes,
  };
}

describe("engine settings on a simulated chain and clock", () => {
  it("bundleInterval: in auto mode the first bundle goes out once bundleInterval has passed, not before", async () => {
    const { clock, bundler, send, statuses } = await simulated({
      bundlingMode: "auto",
      bundleInterval: 5_000,
    });
    const hash = await send(1);
    bundler.start();
    await clock.advanceBy(4_500);
    expect(statuses(hash)).toEqual(["pending"]);
    await clock.advanceBy(1_000);
    expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
    await bundler.stop();
  });

  it.each(["manual", "pull"] as const)(
    "bundlingMode %s: the running engine never bundles on its own",
    async (bundlingMode) => {
      const { clock, bundler, send, statuses } = await simulated({
        bundlingMode,
        bundleInterval: 1_000,
      });
      const hash = await send(1);
      bundler.start();
      await clock.advanceBy(10_000);
      expect(statuses(hash)).toEqual(["pending"]);
      await bundler.stop();
    },
  );

  it.each([
    [2_000, 11],
    [5_000, 5],
  ])(
    "blockPollingInterval %i ms: the running engine asks the node for its head %i times in 20 s",
    async (blockPollingInterval, polls) => {
      // An hour between bundling runs: only the block source asks for blocks.
      const { clock, bundler, requests } = await simulated(
        { blockPollingInterval, bundleInterval: 3_600_000 },
        { pollForBlocks: true },
      );
      requests.length = 0;
      bundler.start();
      await clock.advanceBy(20_000);
      expect(requests.filter((method) => method === "eth_getBlockByNumber")).toHaveLength(polls);
      await bundler.stop();
    },
  );

  it("receiptTimeoutMs: sendBundleNow returns after receiptTimeoutMs with its bundle unmined", async () => {
    const { clock, bundler, send, statuses, sent } = await simulated(
      { receiptTimeoutMs: 5_000 },
      { delivery: () => ({ drop: true }) },
    );
    const hash = await send(1);
    let returned: Hash[] | undefined;
    void bundler.sendBundleNow().then((hashes) => {
      returned = hashes;
    });
    await clock.advanceBy(4_900);
    expect(returned).toBeUndefined();
    await clock.advanceBy(200);
    expect(returned).toEqual([sent[0]!.hash]);
    expect(statuses(hash)).toEqual(["pending", "submitted"]);
  });

  it.each([1, 4])(
    "bundleReplaceAfterBlocks %i: a bundle the chain never saw is replaced that many blocks after it was sent",
    async (blocks) => {
      let deliveries = 0;
      const { clock, bundler, send, sent, statuses } = await simulated(
        { bundleReplaceAfterBlocks: blocks },
        { delivery: () => (deliveries++ === 0 ? { drop: true } : {}) },
      );
      const hash = await send(1);
      void bundler.sendBundleNow();
      await clock.advanceBy((blocks + 2) * 1_000);
      expect(sent).toHaveLength(2);
      expect(sent[1]!.atBlock - sent[0]!.atBlock).toBe(BigInt(blocks));
      expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
    },
  );

  it("bundleFeeBumpPercent: a replacement raises both fees by that percent and one wei", async () => {
    let deliveries = 0;
    const { clock, bundler, send, sent } = await simulated(
      { bundleReplaceAfterBlocks: 1, bundleFeeBumpPercent: 50n },
      { delivery: () => (deliveries++ === 0 ? { drop: true } : {}) },
    );
    await send(1);
    void bundler.sendBundleNow();
    await clock.advanceBy(3_000);
    const [first, replacement] = sent;
    expect({
      maxFeePerGas: replacement!.maxFeePerGas,
      maxPriorityFeePerGas: replacement!.maxPriorityFeePerGas,
    }).toEqual({
      maxFeePerGas: (first!.maxFeePerGas * 150n) / 100n + 1n,
      maxPriorityFeePerGas: (first!.maxPriorityFeePerGas * 150n) / 100n + 1n,
    });
  });

  it("maxBundleFeePerGas: a bundle whose replacement would bid more is cancelled, and its operation goes back to the pool", async () => {
    let deliveries = 0;
    // The first bid is 2.1 gwei (twice the 1 gwei base fee, and the 0.1 gwei tip); its replacement would bid 2.415 gwei.
    const { clock, bundler, send, sent, changes } = await simulated(
      { bundleReplaceAfterBlocks: 1, maxBundleFeePerGas: parseGwei("2.2") },
      { delivery: () => (deliveries++ === 0 ? { drop: true } : {}) },
    );
    const hash = await send(1);
    void bundler.sendBundleNow();
    await clock.advanceBy(3_000);
    expect(sent[0]!.maxFeePerGas).toBe(parseGwei("2.1"));
    expect(sent[1]).toMatchObject({ from: sent[0]!.from, to: sent[0]!.from, value: 0n });
    expect(changes.at(-1)).toMatchObject({
      userOpHash: hash,
      status: "pending",
      reason: "its bundle was cancelled; back in the pool",
    });
  });

  it.each([
    [12, "follows"],
    [2, "no longer follows"],
  ])(
    "reorgDepth %i: the engine %s an inclusion that a reorg moves four blocks later",
    async (reorgDepth, what) => {
      const { clock, chain, bundler, send } = await simulated({ reorgDepth });
      const hash = await send(1);
      const sending = bundler.sendBundleNow();
      await clock.advanceBy(1_000);
      await sending;
      bundler.start();
      const before = (await bundler.getUserOperationByHash(hash))!.blockHash;
      await clock.advanceBy(4_000);
      const minedAt = (await bundler.getUserOperationReceipt(hash))!.receipt.blockNumber as Hex;
      chain.reorg(Number(chain.head().number - BigInt(minedAt)) + 1);
      await clock.advanceBy(2_000);
      const moved = (await bundler.getUserOperationReceipt(hash))!.receipt.blockHash;
      expect(moved).not.toBe(before);
      expect((await bundler.getUserOperationByHash(hash))!.blockHash).toBe(
        what === "follows" ? moved : before,
      );
      await bundler.stop();
    },
  );

  it.each([
    [5_000, "adopts it and finds it included"],
    [60_000, "leaves it to its engine"],
  ])(
    "bundleClaimLeaseMs %i: 6 s after an engine died having sent a bundle, a peer %s",
    async (bundleClaimLeaseMs, what) => {
      const dead = await simulated(
        { bundleClaimLeaseMs },
        { dieAfterSubmit: true, instanceId: "dead" },
      );
      const hash = await dead.send(1);
      void dead.bundler.sendBundleNow();
      await dead.clock.advanceBy(6_000);
      const peer = await simulated({}, { shared: dead, instanceId: "peer" });
      await peer.bundler.sendBundleNow();
      expect((await peer.store.get(hash))?.status).toBe(
        what.startsWith("adopts") ? "included" : "submitted",
      );
    },
  );

  describe("reputation: an entity seen in 240 operations, none included", () => {
    const entity = keccak256(toHex("an entity")).slice(0, 42) as Address;
    it.each<[Partial<BundlerConfig>, string]>([
      [{}, "throttled"],
      [{ minInclusionDenominator: 2 }, "banned"],
      [{ throttlingSlack: 30 }, "ok"],
      [{ banSlack: 20 }, "banned"],
    ])("with %o is %s", async (config, status) => {
      const { bundler, chain } = await simulated(config);
      await bundler.setReputation(chain.entryPoint.address, [
        { address: entity, opsSeen: 240, opsIncluded: 0 },
      ]);
      expect((await bundler.dumpReputation(chain.entryPoint.address))[0]).toMatchObject({ status });
    });
  });
});
