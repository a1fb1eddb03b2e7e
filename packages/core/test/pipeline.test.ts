import { type Address, type Hash, type Hex, parseEther, parseTransaction } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleGasOf } from "../src/bundle/bundle-gas.ts";
import { decodeHandleOps } from "../src/userop/decode-handle-ops.ts";
import { createEntryPointRegistry } from "../src/entrypoint/registry.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { Submitter } from "../src/ports/submitter.ts";
import { userOperationEventTopic } from "../src/receipt/user-operation-event.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import { createMemoryReputationStore } from "../src/reputation/memory-reputation-store.ts";
import { engineFixture, rejection } from "./fixtures.ts";
import { manualClock } from "./manual-clock.ts";

/** From admission to the chain under the pipeline's limits, and across crashes and restarts. */
describe("bundle pipeline", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  const recipient = (): Address => privateKeyToAccount(fx.devnet.accountKeys[14]!).address;

  /** How many `UserOperationEvent`s of `userOpHash` the chain holds. */
  async function eventsOf(userOpHash: Hash): Promise<number> {
    const logs = await fx.client.request({
      method: "eth_getLogs",
      params: [{ fromBlock: "0x0", toBlock: "latest", topics: [userOperationEventTopic, userOpHash] }],
    });
    return logs.length;
  }

  /** A submitter that hands the transaction to the node (or not), then never answers: the process died there. */
  function dyingSubmitter(options: { sendFirst: boolean }): Submitter & { reached: Promise<void> } {
    let reached!: () => void;
    const promise = new Promise<void>((resolve) => {
      reached = resolve;
    });
    return {
      name: "classic",
      reached: promise,
      async submit(signed) {
        if (options.sendFirst) await fx.client.sendRawTransaction({ serializedTransaction: signed.serialized });
        reached();
        return new Promise<Hash>(() => {});
      },
    };
  }

  describe("gas-bounded bundles", () => {
    it("refuses at admission an operation that could never fit a bundle, naming maxBundleGas (-32602)", async () => {
      const { bundler } = await fx.makeBundler({ settings: { bundling: { maxGas: 300_000n } } });
      const account = await fx.makeAccount("0.7");
      const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }, { callGasLimit: 400_000n });
      const error = await rejection(bundler.sendUserOperation(op, account.entryPoint.address));
      expect(error.code).toBe(RpcErrorCode.invalidParams);
      expect(error.message).toMatch(/above maxBundleGas 300000; it could never be bundled/);
    });

    it("defaults maxBundleGas to what a block holds with the bundle gas markup", async () => {
      const { bundler } = await fx.makeBundler();
      const account = await fx.makeAccount("0.7");
      const block = await fx.client.getBlock();
      const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }, { callGasLimit: block.gasLimit });
      const error = await rejection(bundler.sendUserOperation(op, account.entryPoint.address));
      expect(error.message).toContain(`above maxBundleGas ${(block.gasLimit * 100n) / 120n - 50_000n}`);
    });

    it("splits a deep pool into bundles within maxBundleGas, every operation included once", async () => {
      const store = createMemoryMempoolStore();
      const { bundler: admitting } = await fx.makeBundler({ store });
      const hashes: Hash[] = [];
      let largest = 0n;
      for (let i = 0; i < 5; i++) {
        const account = await fx.makeAccount("0.8");
        const op = await fx.makeOperation(admitting, account, { to: recipient(), value: 1n });
        largest = bundleGasOf(op) > largest ? bundleGasOf(op) : largest;
        hashes.push(await admitting.sendUserOperation(op, account.entryPoint.address));
      }
      // Room for two operations per bundle, not three.
      const { bundler } = await fx.makeBundler({ store, settings: { bundling: { maxGas: largest * 2n + largest / 2n } } });
      const bundles = await bundler.sendBundleNow();
      const sizes = await Promise.all(
        bundles.map(async (hash) => (await fx.client.getTransactionReceipt({ hash })).logs.filter((l) => l.topics[0] === userOperationEventTopic).length),
      );
      expect(sizes).toEqual([2, 2, 1]);
      for (const hash of hashes) {
        expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
        expect(await eventsOf(hash)).toBe(1);
      }
    });

    it("leaves an operation that cannot pay the base fee in the pool instead of sending it at a loss", async () => {
      const store = createMemoryMempoolStore();
      const { bundler } = await fx.makeBundler({ store });
      const account = await fx.makeAccount("0.7");
      const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
      const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
      // The base fee rises above what the operation offers; the devnet gets its own back whatever happens.
      const baseFee = (await fx.client.getBlock()).baseFeePerGas!;
      const mineWithBaseFee = async (fee: bigint) => {
        await fx.client.request({ method: "anvil_setNextBlockBaseFeePerGas" as never, params: [`0x${fee.toString(16)}`] as never });
        await fx.client.request({ method: "evm_mine" as never });
      };
      try {
        await mineWithBaseFee(op.maxFeePerGas + 1n);
        expect((await fx.client.getBlock()).baseFeePerGas).toBe(op.maxFeePerGas + 1n);
        expect(await bundler.sendBundleNow()).toEqual([]);
        expect((await store.get(hash))?.status).toBe("pending");
      } finally {
        await mineWithBaseFee(baseFee);
      }
      // Once the base fee falls back, it is bundled.
      await bundler.sendBundleNow();
      expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    });
  });

  describe("restart reconciliation", () => {
    it("finds an operation whose bundle went out just before a crash: included once, its receipt served", async () => {
      const store = createMemoryMempoolStore();
      const dying = dyingSubmitter({ sendFirst: true });
      const { bundler: crashed } = await fx.makeBundler({ store, submitter: dying, instanceId: "engine-1" });
      const account = await fx.makeAccount("0.7");
      const op = await fx.makeOperation(crashed, account, { to: recipient(), value: 1n });
      const hash = await crashed.sendUserOperation(op, account.entryPoint.address);
      void crashed.sendBundleNow();
      await dying.reached;
      expect((await store.get(hash))?.status).toBe("submitted");

      const { bundler: restarted } = await fx.makeBundler({ store, instanceId: "engine-1" });
      const changes: StatusChange[] = [];
      restarted.onStatusChange((c) => changes.push(c));
      expect(await restarted.sendBundleNow()).toEqual([]);
      expect(changes).toEqual([expect.objectContaining({ userOpHash: hash, status: "included", success: true })]);
      expect((await restarted.getUserOperationReceipt(hash))?.success).toBe(true);
      expect((await restarted.getUserOperationByHash(hash))?.blockNumber).toBeGreaterThan(0n);
      expect(await eventsOf(hash)).toBe(1);
    });

    it("puts back an operation recorded as sent whose transaction never left (crash before the send), then includes it once", async () => {
      const store = createMemoryMempoolStore();
      const dying = dyingSubmitter({ sendFirst: false });
      const { bundler: crashed } = await fx.makeBundler({ store, submitter: dying, instanceId: "engine-2" });
      const account = await fx.makeAccount("0.8");
      const op = await fx.makeOperation(crashed, account, { to: recipient(), value: 1n });
      const hash = await crashed.sendUserOperation(op, account.entryPoint.address);
      void crashed.sendBundleNow();
      await dying.reached;

      const { bundler: restarted } = await fx.makeBundler({ store, instanceId: "engine-2" });
      const changes: StatusChange[] = [];
      restarted.onStatusChange((c) => changes.push(c));
      const [transactionHash] = await restarted.sendBundleNow();
      expect(changes.map((c) => c.status)).toEqual(["pending", "submitted", "included"]);
      expect(changes[0]).toMatchObject({ userOpHash: hash, reason: "not on chain when reconciled; back in the pool" });
      expect((await restarted.getUserOperationReceipt(hash))?.receipt.transactionHash).toBe(transactionHash);
      expect(await eventsOf(hash)).toBe(1);
    });

    it("bundles an operation whose claim lapsed with the engine that claimed it", async () => {
      const store = createMemoryMempoolStore();
      const clock = manualClock();
      const { bundler } = await fx.makeBundler({ store, clock });
      const account = await fx.makeAccount("0.7");
      const hash = await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }), account.entryPoint.address);
      // A peer claimed it for a bundle a second ago, with a one-second lease, and died.
      await store.claimForBundle({ entryPoint: account.entryPoint.address, limit: 10, claimant: "dead-peer", leaseMs: 1_000, now: clock.now() - 1_000 });
      expect((await store.get(hash))?.status).toBe("bundling");
      await bundler.sendBundleNow();
      expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    });

    it("releases at once, on restart, what it had claimed for a bundle and not sent, instead of waiting for its lease", async () => {
      const store = createMemoryMempoolStore();
      const clock = manualClock();
      const { bundler } = await fx.makeBundler({ store, clock, instanceId: "engine-5" });
      const account = await fx.makeAccount("0.8");
      const hash = await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }), account.entryPoint.address);
      // The engine claimed it for a bundle with a minute's lease, and died before sending.
      await store.claimForBundle({ entryPoint: account.entryPoint.address, limit: 10, claimant: "engine-5", leaseMs: 60_000, now: clock.now() });
      const { bundler: restarted } = await fx.makeBundler({ store, clock, instanceId: "engine-5" });
      const changes: StatusChange[] = [];
      restarted.onStatusChange((c) => changes.push(c));
      await restarted.sendBundleNow();
      expect(changes[0]).toEqual({ userOpHash: hash, status: "pending", reason: "claimed for a bundle before a restart and never sent; back in the pool" });
      expect((await restarted.getUserOperationReceipt(hash))?.success).toBe(true);
      expect(await eventsOf(hash)).toBe(1);
    });

    it("v0.9: an adopted operation whose factory the EntryPoint ignored (IgnoredInitCode) does not count as the factory's inclusion", async () => {
      const store = createMemoryMempoolStore();
      const reputation = createMemoryReputationStore();
      const clock = manualClock();
      const { bundler: first } = await fx.makeBundler({ store, clock, reputation });
      const account = await fx.makeAccount("0.9");
      const entryPoint = account.entryPoint.address;
      const { factory, factoryData } = (await account.getFactoryArgs()) as { factory: Address; factoryData: Hex };
      await first.sendUserOperation(await fx.makeOperation(first, account, { to: recipient(), value: 1n }), entryPoint);
      await first.sendBundleNow(); // deploys the account: the factory's one use
      const factoryReputation = async () => (await first.dumpReputation(entryPoint)).find((e) => e.address.toLowerCase() === factory.toLowerCase());
      expect(await factoryReputation()).toMatchObject({ opsSeen: 1, opsIncluded: 1 });

      const dying = dyingSubmitter({ sendFirst: true });
      const { bundler: dead } = await fx.makeBundler({ store, clock, reputation, submitter: dying, instanceId: "engine-6", settings: { bundling: { claimLeaseMs: 60_000 } } });
      const op = await fx.makeOperation(dead, account, { to: recipient(), value: 1n }, { factory, factoryData });
      const hash = await dead.sendUserOperation(op, entryPoint);
      void dead.sendBundleNow();
      await dying.reached;
      const { bundler: peer } = await fx.makeBundler({ store, clock, reputation, instanceId: "engine-7" });
      clock.advance(60_000);
      await peer.sendBundleNow();
      expect((await store.get(hash))?.status).toBe("included");
      expect(await factoryReputation()).toMatchObject({ opsSeen: 1, opsIncluded: 1 });
    });

    it("adopts another engine's sent operations only once its claims lapse", async () => {
      const store = createMemoryMempoolStore();
      const dying = dyingSubmitter({ sendFirst: true });
      const clock = manualClock();
      const { bundler: dead } = await fx.makeBundler({ store, clock, submitter: dying, instanceId: "engine-3", settings: { bundling: { claimLeaseMs: 60_000 } } });
      const account = await fx.makeAccount("0.6");
      const op = await fx.makeOperation(dead, account, { to: recipient(), value: 1n });
      const hash = await dead.sendUserOperation(op, account.entryPoint.address);
      void dead.sendBundleNow();
      await dying.reached;

      const { bundler: peer } = await fx.makeBundler({ store, clock, instanceId: "engine-4" });
      await peer.sendBundleNow();
      expect((await store.get(hash))?.status).toBe("submitted");
      // Not adopted yet, but what the chain holds is served already.
      expect((await peer.getUserOperationReceipt(hash))?.success).toBe(true);
      expect((await peer.getUserOperationByHash(hash))?.blockNumber).toBeGreaterThan(0n);
      // A minute later the claim has lapsed.
      clock.advance(60_000);
      await peer.sendBundleNow();
      expect((await store.get(hash))?.status).toBe("included");
      expect((await peer.getUserOperationReceipt(hash))?.success).toBe(true);
    });
  });

  it("sends one bundle per free relayer when the pool is deep, each relayer's nonce in order", async () => {
    const store = createMemoryMempoolStore();
    const { bundler: admitting } = await fx.makeBundler({ store });
    let largest = 0n;
    for (let i = 0; i < 4; i++) {
      const account = await fx.makeAccount("0.7", parseEther("0.5"));
      const op = await fx.makeOperation(admitting, account, { to: recipient(), value: 1n });
      largest = bundleGasOf(op) > largest ? bundleGasOf(op) : largest;
      await admitting.sendUserOperation(op, account.entryPoint.address);
    }
    const { bundler } = await fx.makeBundler({ store, settings: { bundling: { maxGas: largest } } });
    const bundles = await bundler.sendBundleNow();
    expect(bundles).toHaveLength(4);
    const senders = await Promise.all(bundles.map(async (hash) => (await fx.client.getTransaction({ hash })).from));
    expect(new Set(senders).size).toBe(fx.devnet.relayerKeys.length);
  });

  it("tries the next relayer when the node refuses a bundle for lack of funds", async () => {
    const broke = generatePrivateKey();
    const [funded] = fx.devnet.relayerKeys;
    const { bundler } = await fx.makeBundler({ relayerKeys: [broke, funded!], settings: { relaying: { minSignerBalance: 0n } } });
    const account = await fx.makeAccount("0.7");
    const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    const [transactionHash] = await bundler.sendBundleNow();
    expect((await fx.client.getTransaction({ hash: transactionHash! })).from).toBe(privateKeyToAccount(funded!).address.toLowerCase());
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("evicts what the policy values least once the pool holds more than maxMempoolSize, and bundles the rest", async () => {
    const { bundler } = await fx.makeBundler({ settings: { mempool: { maxSize: 2 } } });
    const changes: StatusChange[] = [];
    bundler.onStatusChange((c) => changes.push(c));
    const hashes: Hash[] = [];
    for (const bump of [3n, 1n, 2n]) {
      const account = await fx.makeAccount("0.7");
      const draft = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
      const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }, { maxPriorityFeePerGas: draft.maxPriorityFeePerGas + bump, maxFeePerGas: draft.maxFeePerGas + bump });
      hashes.push(await bundler.sendUserOperation(op, account.entryPoint.address));
    }
    await bundler.sendBundleNow();
    expect(changes.find((c) => c.status === "dropped")).toEqual({ userOpHash: hashes[1], status: "dropped", reason: "evicted: the mempool is full" });
    for (const hash of [hashes[0]!, hashes[2]!]) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("splits a bundle the node refuses for its gas limit, until each part is accepted", async () => {
    const store = createMemoryMempoolStore();
    const { bundler: admitting } = await fx.makeBundler({ store });
    const hashes: Hash[] = [];
    for (let i = 0; i < 4; i++) {
      const account = await fx.makeAccount("0.7");
      hashes.push(await admitting.sendUserOperation(await fx.makeOperation(admitting, account, { to: recipient(), value: 1n }), account.entryPoint.address));
    }
    // A node whose blocks hold at most two of these operations (at the Submitter port).
    const sizes: number[] = [];
    const submitter: Submitter = {
      name: "classic",
      async submit(signed) {
        const transaction = parseTransaction(signed.serialized);
        const ops = decodeHandleOps(createEntryPointRegistry().get(transaction.to!), transaction.data!).length;
        sizes.push(ops);
        if (ops > 2) throw new Error("intrinsic gas too high -- tx.gas_limit > env.block.gas_limit");
        return fx.client.sendRawTransaction({ serializedTransaction: signed.serialized });
      },
    };
    const { bundler } = await fx.makeBundler({ store, submitter });
    await bundler.sendBundleNow();
    expect(sizes[0]).toBe(4);
    expect(sizes.slice(1).every((n) => n <= 2)).toBe(true);
    for (const hash of hashes) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });
});
