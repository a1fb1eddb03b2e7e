import { type BundlerSettingsInput, createDefaultMempoolPolicy, createPollingBlockSource, mergeBundlerSettings, silentLogger, systemClock } from "@bundlekit/core";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { Effect, Fiber, Layer, Stream } from "effect";
import { TestClock } from "effect/testing";
import { type Hash, parseEther, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFixture } from "../../core/test/fixtures.ts";
import { recordStatusChanges } from "../../core/test/status-changes.ts";
import { Bundler } from "../src/bundler.ts";
import { effectClock } from "../src/clock.ts";
import { effectLogger } from "../src/logger.ts";
import { Blocks, BundleSubmitter, Chain, MempoolStorage, PoolPolicy, Relayers } from "../src/ports.ts";
import { memoryStores } from "../src/stores.ts";

/** The engine as an Effect service on a real anvil, its timers on Effect's clock. */
describe("@bundlekit/effect", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  /** Every port from a layer; the engine's clock and logger are Effect's. */
  const ports = () =>
    Layer.mergeAll(
      Layer.succeed(Chain, fx.client as never),
      Layer.succeed(Relayers, createLocalKeySigner(fx.devnet.relayerKeys)),
      memoryStores,
      effectClock,
      effectLogger,
    );
  // The tracer on the test's thread, as in the core tests' engines (testEngineSettings).
  const bundlerLayer = (settings: BundlerSettingsInput = {}) =>
    Bundler.layer(
      mergeBundlerSettings({ bundling: { intervalMs: 1_000 }, tracking: { blockPollingIntervalMs: 1_000 }, validation: { tracerWorkers: 0 } }, settings),
    ).pipe(Layer.provideMerge(ports()));

  it("runs on TestClock: a bundling tick two minutes away comes once the test moves the clock, and the operation is included", async () => {
    const account = await fx.makeAccount("0.7");
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const store = yield* MempoolStorage;
      const { change } = recordStatusChanges(bundler.engine);
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: account.address, value: 1n }));
      const hash = yield* bundler.sendUserOperation(op, account.entryPoint.address);
      const before = (yield* Effect.promise(() => store.get(hash)))?.status;
      // On the wall clock the first tick would come after the test's timeout.
      yield* TestClock.adjust("2 minutes");
      yield* Effect.promise(() => change(hash, "submitted"));
      const receipt = yield* bundler.getUserOperationReceipt(hash);
      return { before, success: receipt?.success };
    });
    const layer = bundlerLayer({ bundling: { intervalMs: 120_000 }, tracking: { blockPollingIntervalMs: 120_000 } });
    const result = await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.provide(TestClock.layer())));
    expect(result).toEqual({ before: "pending", success: true });
  });

  it("fails with a tagged error carrying the ERC-7769 code", async () => {
    const unfunded = await fx.makeAccount("0.7", 0n);
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      // Estimated as if funded: estimation itself answers AA21 for the account as it is.
      const funded = { [unfunded.address]: { balance: toHex(parseEther("1")) } };
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, unfunded, { to: unfunded.address, value: 0n }, {}, funded));
      return yield* Effect.flip(bundler.sendUserOperation(op, unfunded.entryPoint.address));
    });
    const error = await Effect.runPromise(program.pipe(Effect.provide(bundlerLayer())));
    expect(error).toMatchObject({ _tag: "EntryPointRejected", code: -32500 });
    expect(error.message).toMatch(/^AA21/);
  });

  it("streams status changes", async () => {
    const account = await fx.makeAccount("0.8");
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      // Started at once: subscribed when forkChild returns, before the operation is sent.
      const changes = yield* Effect.forkChild(Stream.runCollect(bundler.statusChanges.pipe(Stream.take(3))), { startImmediately: true });
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: account.address, value: 1n }));
      const hash: Hash = yield* bundler.sendUserOperation(op, account.entryPoint.address);
      yield* bundler.sendBundleNow();
      const collected = yield* Fiber.join(changes);
      return { hash, collected };
    });
    const { hash, collected } = await Effect.runPromise(program.pipe(Effect.provide(bundlerLayer({ bundling: { mode: "manual" } }))));
    expect(collected.map((c) => [c.userOpHash, c.status])).toEqual([
      [hash, "pending"],
      [hash, "submitted"],
      [hash, "included"],
    ]);
  });

  it("uses the adapters provided as services: a mempool policy, a submitter and a block source of the program's own", async () => {
    const account = await fx.makeAccount("0.7");
    const seen = { admitted: 0, submitted: 0, heads: 0 };
    const policy = createDefaultMempoolPolicy();
    const blocks = createPollingBlockSource({ client: fx.client as never, clock: systemClock, logger: silentLogger, intervalMs: 50 });
    const adapters = Layer.mergeAll(
      Layer.succeed(PoolPolicy, {
        ...policy,
        admit(context) {
          seen.admitted++;
          return policy.admit(context);
        },
      }),
      Layer.succeed(BundleSubmitter, {
        name: "recording",
        submit: async (signed) => {
          seen.submitted++;
          return fx.client.sendRawTransaction({ serializedTransaction: signed.serialized });
        },
      }),
      Layer.succeed(Blocks, {
        ...blocks,
        latest() {
          seen.heads++;
          return blocks.latest();
        },
      }),
    );
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: account.address, value: 1n }));
      const hash = yield* bundler.sendUserOperation(op, account.entryPoint.address);
      yield* bundler.sendBundleNow();
      return (yield* bundler.getUserOperationReceipt(hash))?.success;
    });
    const layer = Bundler.layer({ validation: { tracerWorkers: 0 }, bundling: { mode: "manual" } }).pipe(Layer.provide(adapters), Layer.provideMerge(ports()));
    expect(await Effect.runPromise(program.pipe(Effect.provide(layer)))).toBe(true);
    expect(seen.admitted).toBe(1);
    expect(seen.submitted).toBe(1);
    expect(seen.heads).toBeGreaterThan(0);
  });

  it("interrupting an estimate aborts the engine's work: no node call after the one in flight", async () => {
    const account = await fx.makeAccount("0.7");
    // The chain client port, counting calls; the one numbered `holdAt` waits for `release`.
    let calls = 0;
    let holdAt = Number.POSITIVE_INFINITY;
    let reached!: () => void;
    const held = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const counting = new Proxy(fx.client, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls++;
          if (calls !== holdAt) return Reflect.apply(value, target, args);
          reached();
          return released.then(() => Reflect.apply(value, target, args));
        };
      },
    });
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: account.address, value: 1n }));
      const start = calls;
      yield* bundler.estimateUserOperationGas(op, account.entryPoint.address);
      const whole = calls - start;
      const begun = calls;
      holdAt = begun + 2;
      const estimate = yield* Effect.forkChild(bundler.estimateUserOperationGas(op, account.entryPoint.address), { startImmediately: true });
      yield* Effect.promise(() => held);
      estimate.interruptUnsafe();
      release();
      yield* Fiber.await(estimate);
      // The engine resumes from the call in flight and finds its signal aborted before the next.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)));
      return { whole, interrupted: calls - begun };
    });
    const layer = Bundler.layer({ validation: { tracerWorkers: 0 }, bundling: { mode: "manual" } }).pipe(
      Layer.provideMerge(Layer.mergeAll(Layer.succeed(Chain, counting), Layer.succeed(Relayers, createLocalKeySigner(fx.devnet.relayerKeys)), memoryStores, effectClock)),
    );
    const { whole, interrupted } = await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.provide(TestClock.layer())));
    expect(whole).toBeGreaterThan(2);
    expect(interrupted).toBe(2);
  });
});
