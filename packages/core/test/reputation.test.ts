import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { engineFixture, rejection } from "./fixtures.ts";
import { manualClock } from "./manual-clock.ts";
import { recordStatusChanges } from "./status-changes.ts";

/** ERC-7562 reputation and the mempool TTL in the engine, on a real anvil. */
let fx: Awaited<ReturnType<typeof engineFixture>>;
const recipient: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
beforeAll(async () => {
  fx = await engineFixture();
});
afterAll(() => fx?.devnet.stop());

type TestBundler = Awaited<ReturnType<typeof fx.makeBundler>>["bundler"];

/** A counterfactual account's first operation on `version` (so it names the factory), ready to send. */
async function deployingOperationOn(bundler: TestBundler, version: "0.6" | "0.7" | "0.8" | "0.9") {
  const account = await fx.makeAccount(version);
  const op = await fx.makeOperation(bundler, account, { to: recipient, value: 1n });
  return { account, op, entryPoint: account.entryPoint.address };
}

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("ERC-7562 reputation on EntryPoint v%s", (version) => {
  let factory: Address;
  beforeAll(() => {
    factory = fx.devnet.deployments[version].simpleAccountFactory;
  });
  const deployingOperation = (bundler: TestBundler) => deployingOperationOn(bundler, version);

  it("counts the factory's operation as seen on admission and as included once mined", async () => {
    const { bundler } = await fx.makeBundler();
    const { op, entryPoint } = await deployingOperation(bundler);
    expect(await bundler.dumpReputation(entryPoint)).toEqual([]);

    const hash = await bundler.sendUserOperation(op, entryPoint);
    // The unstaked sender is not tracked (ERC-7562 limits it by count instead); the factory is.
    expect(await bundler.dumpReputation(entryPoint)).toEqual([
      { address: factory, opsSeen: 1, opsIncluded: 0, status: "ok" },
    ]);

    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    expect(await bundler.dumpReputation(entryPoint)).toEqual([
      { address: factory, opsSeen: 1, opsIncluded: 1, status: "ok" },
    ]);
  });

  it("gives the seen count back when a replacement takes the operation's place (GREP-050)", async () => {
    const { bundler } = await fx.makeBundler();
    const { account, op, entryPoint } = await deployingOperation(bundler);
    await bundler.sendUserOperation(op, entryPoint);
    const bumped = await fx.makeOperation(
      bundler,
      account,
      { to: recipient, value: 2n },
      {
        maxFeePerGas: op.maxFeePerGas + op.maxFeePerGas / 5n,
        maxPriorityFeePerGas: op.maxPriorityFeePerGas + op.maxPriorityFeePerGas / 5n,
      },
    );
    await bundler.sendUserOperation(bumped, entryPoint);
    expect(await bundler.dumpReputation(entryPoint)).toEqual([
      { address: factory, opsSeen: 1, opsIncluded: 0, status: "ok" },
    ]);
  });

  it("rejects an operation whose factory is banned with -32504 naming the factory, keeping it out of the pool", async () => {
    const { bundler, store } = await fx.makeBundler();
    const { op, entryPoint } = await deployingOperation(bundler);
    await bundler.setReputation(entryPoint, [{ address: factory, opsSeen: 1000, opsIncluded: 0 }]);
    expect(await bundler.dumpReputation(entryPoint)).toEqual([
      { address: factory, opsSeen: 1000, opsIncluded: 0, status: "banned" },
    ]);

    const error = await rejection(bundler.sendUserOperation(op, entryPoint));
    expect(error.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(error.message).toBe(`factory ${factory} is banned`);
    expect(error.data).toEqual({ factory, status: "banned" });
    expect(await store.countByStatus()).toMatchObject({ pending: 0 });
    // A ban is not counted as a sighting.
    expect((await bundler.dumpReputation(entryPoint))[0]?.opsSeen).toBe(1000);

    // Once its record is good again, the same operation is admitted.
    await bundler.setReputation(entryPoint, [
      { address: factory, opsSeen: 1000, opsIncluded: 100 },
    ]);
    await bundler.sendUserOperation(op, entryPoint);
    expect(await store.countByStatus()).toMatchObject({ pending: 1 });
  });

  it("admits a throttled factory's operations until it has 4 in the pool, then rejects with -32504", async () => {
    const { bundler } = await fx.makeBundler();
    const ops = [];
    for (let i = 0; i < 5; i++) ops.push(await deployingOperation(bundler));
    const entryPoint = ops[0]!.entryPoint;
    // maxSeen = 200 / 10 = 20: above 0 + throttlingSlack (10), not above 0 + banSlack (50).
    await bundler.setReputation(entryPoint, [{ address: factory, opsSeen: 200, opsIncluded: 0 }]);
    expect((await bundler.dumpReputation(entryPoint))[0]?.status).toBe("throttled");
    for (const { op } of ops.slice(0, 4)) await bundler.sendUserOperation(op, entryPoint);

    const error = await rejection(bundler.sendUserOperation(ops[4]!.op, entryPoint));
    expect(error.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(error.message).toBe(`factory ${factory} is throttled`);
    expect(await bundler.dumpMempool(entryPoint)).toHaveLength(4);
  });

  it("drops the pooled operations of an entity once it is banned (GREP-010), naming it", async () => {
    const { bundler, store } = await fx.makeBundler();
    const { changes } = recordStatusChanges(bundler);
    const first = await deployingOperation(bundler);
    const second = await deployingOperation(bundler);
    const hashes = [await bundler.sendUserOperation(first.op, first.entryPoint), await bundler.sendUserOperation(second.op, second.entryPoint)];
    await bundler.setReputation(first.entryPoint, [{ address: factory, opsSeen: 1000, opsIncluded: 0 }]);

    expect(await bundler.sendBundleNow()).toEqual([]);
    const reason = `GREP-010: factory ${factory} is banned`;
    for (const hash of hashes) {
      expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: reason });
      expect(changes).toContainEqual({ userOpHash: hash, status: "dropped", reason });
    }
  });

  it("puts at most 4 operations of a throttled entity in one bundle (GREP-020)", async () => {
    const { bundler } = await fx.makeBundler({ relayerKeys: fx.devnet.relayerKeys.slice(0, 1) });
    const ops = [];
    for (let i = 0; i < 6; i++) ops.push(await deployingOperation(bundler));
    const entryPoint = ops[0]!.entryPoint;
    const hashes: `0x${string}`[] = [];
    for (const { op } of ops) hashes.push(await bundler.sendUserOperation(op, entryPoint));
    // Throttled after they were admitted: maxSeen 20 is above 0 + throttlingSlack, not above banSlack.
    await bundler.setReputation(entryPoint, [{ address: factory, opsSeen: 200, opsIncluded: 0 }]);

    const bundles = await bundler.sendBundleNow();
    const perBundle = new Map<string, number>();
    for (const hash of hashes) {
      const receipt = await bundler.getUserOperationReceipt(hash);
      const transaction = receipt?.receipt.transactionHash;
      if (transaction) perBundle.set(transaction, (perBundle.get(transaction) ?? 0) + 1);
    }
    expect([...perBundle.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(4);
    expect(Math.max(...perBundle.values())).toBe(4);
    expect(bundles.length).toBe(perBundle.size);
  });

  it("exempts whitelisted entities from bans, and reports them ok", async () => {
    const { bundler } = await fx.makeBundler({
      settings: { reputation: { whitelistedEntities: {
          factory: [factory.toLowerCase() as Address],
          paymaster: [],
          account: [],
        } } },
    });
    const { op, entryPoint } = await deployingOperation(bundler);
    await bundler.setReputation(entryPoint, [{ address: factory, opsSeen: 1000, opsIncluded: 0 }]);
    const hash = await bundler.sendUserOperation(op, entryPoint);
    expect(await bundler.dumpReputation(entryPoint)).toEqual([
      { address: factory, opsSeen: 1001, opsIncluded: 0, status: "ok" },
    ]);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("drops a throttled entity's operation once it has waited 10 blocks in the pool (GREP-020); an ok entity's waits on", async () => {
    const mine = (blocks: number) => fx.client.request({ method: "anvil_mine", params: [`0x${blocks.toString(16)}`] } as never);
    const setNextBaseFee = (fee: bigint) => fx.client.request({ method: "anvil_setNextBlockBaseFeePerGas", params: [`0x${fee.toString(16)}`] } as never);
    for (const throttled of [true, false]) {
      const { bundler, store } = await fx.makeBundler();
      const { op, entryPoint } = await deployingOperation(bundler);
      const hash = await bundler.sendUserOperation(op, entryPoint);
      if (throttled) await bundler.setReputation(entryPoint, [{ address: factory, opsSeen: 200, opsIncluded: 0 }]);
      // The base fee jumps far above what the operation offers: it waits in the pool, block after block.
      const baseFee = (await fx.client.getBlock()).baseFeePerGas!;
      try {
        await setNextBaseFee(op.maxFeePerGas * 100n);
        await mine(1);
        expect(await bundler.sendBundleNow()).toEqual([]);
        await mine(9);
        expect(await bundler.sendBundleNow()).toEqual([]);
        expect(await store.get(hash)).toMatchObject({ status: "pending" });
        await mine(1);
        expect(await bundler.sendBundleNow()).toEqual([]);
        expect(await store.get(hash)).toMatchObject(
          throttled
            ? { status: "dropped", failureReason: `GREP-020: factory ${factory} is throttled, and its operations may stay 10 blocks in the mempool` }
            : { status: "pending" },
        );
      } finally {
        await setNextBaseFee(baseFee);
        await mine(1);
        await bundler.stop();
      }
    }
  });
});

describe("mempool expiry", () => {
  const deployingOperation = (bundler: TestBundler) => deployingOperationOn(bundler, "0.7");

  it("drops an operation pending longer than useropsTTL with a dropped 'expired' event, on the engine's timer", async () => {
    const clock = manualClock();
    const { bundler, store } = await fx.makeBundler({ clock, settings: { mempool: { ttlSeconds: 1 }, bundling: { intervalMs: 100 } } });
    const { changes, change } = recordStatusChanges(bundler);
    const { op, entryPoint } = await deployingOperation(bundler);
    const hash = await bundler.sendUserOperation(op, entryPoint);
    clock.advance(1_001);
    bundler.start(); // manual bundling: the timer only keeps house
    try {
      await change(hash, "dropped");
    } finally {
      await bundler.stop();
    }
    expect(changes).toEqual([
      { userOpHash: hash, status: "pending" },
      { userOpHash: hash, status: "dropped", reason: "expired" },
    ]);
    expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: "expired" });
    expect(await bundler.getUserOperationByHash(hash)).toBeUndefined();
    expect(await bundler.sendBundleNow()).toEqual([]);
    expect(await fx.client.getCode({ address: op.sender })).toBeUndefined();
  });

  it("expires an operation pending longer than useropsTTL before bundling on sendBundleNow, and keeps one pending exactly that long", async () => {
    const clock = manualClock();
    const { bundler, store } = await fx.makeBundler({ clock, settings: { mempool: { ttlSeconds: 2 } } });
    const stale = await deployingOperation(bundler);
    const staleHash = await bundler.sendUserOperation(stale.op, stale.entryPoint);
    clock.advance(1);
    const fresh = await deployingOperation(bundler);
    const freshHash = await bundler.sendUserOperation(fresh.op, fresh.entryPoint);
    clock.advance(2_000); // the stale one is now 2.001 s old, the fresh one 2 s
    expect(await bundler.sendBundleNow()).toHaveLength(1);
    expect(await store.get(staleHash)).toMatchObject({ status: "dropped", failureReason: "expired" });
    expect((await bundler.getUserOperationReceipt(freshHash))?.success).toBe(true);
  });
});
