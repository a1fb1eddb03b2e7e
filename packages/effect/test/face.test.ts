import { createMemoryMempoolStore, createMemoryReputationStore, createPollingBlockSource, silentLogger, systemClock } from "@bundlekit/core";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { Effect, Layer } from "effect";
import { type Address, createPublicClient, http } from "viem";
import { privateKeyToAccount, toAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFixture } from "../../core/test/fixtures.ts";
import { Bundler } from "../src/bundler.ts";
import { Blocks, Chain, MempoolStorage, Relayers, ReputationStorage } from "../src/ports.ts";
import { memoryStores } from "../src/stores.ts";

/** Every method of the `Bundler` service on a real anvil, the stores it is given, and its scope. */
describe("Bundler through the face", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  const sequencer = () => privateKeyToAccount(fx.devnet.accountKeys[12]!);
  const recipient = (): Address => privateKeyToAccount(fx.devnet.accountKeys[11]!).address;
  const ports = () =>
    Layer.mergeAll(
      Layer.succeed(Chain, createPublicClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), pollingInterval: 50 })),
      Layer.succeed(Relayers, createLocalKeySigner(fx.devnet.relayerKeys)),
      memoryStores,
    );

  it("estimates, admits, looks up, proposes, releases and commits on the pull path; a closed proposal fails with ProposalNotOpen", async () => {
    const account = await fx.makeAccount("0.7");
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: recipient(), value: 1n }));
      const estimate = yield* bundler.estimateUserOperationGas(op, account.entryPoint.address);
      const hash = yield* bundler.sendUserOperation(op, account.entryPoint.address);
      const lookup = yield* bundler.getUserOperationByHash(hash);
      const receiptBefore = yield* bundler.getUserOperationReceipt(hash);
      const latest = yield* Effect.promise(() => fx.client.getBlock());
      const block = { gasBudget: 10_000_000n, baseFee: latest.baseFeePerGas!, blockNumber: latest.number + 1n, timestamp: latest.timestamp + 1n, from: sequencer().address, signer: sequencer() };
      const released = yield* bundler.proposeBundle(block);
      yield* bundler.releaseBundle(released!.id);
      const releasedAgain = yield* Effect.flip(bundler.releaseBundle(released!.id));
      const unknownCommit = yield* Effect.flip(bundler.commitBundle("no-such-proposal"));
      const committed = yield* bundler.proposeBundle(block);
      yield* bundler.commitBundle(committed!.id);
      return { estimate, hash, lookup, receiptBefore, released, releasedAgain, unknownCommit, committed };
    });
    const layer = Bundler.layer({ validation: { tracerWorkers: 0 }, bundling: { mode: "pull" } }).pipe(Layer.provideMerge(ports()));
    const result = await Effect.runPromise(program.pipe(Effect.provide(layer)));
    expect(result.estimate.callGasLimit).toBeGreaterThan(0n);
    expect(result.estimate.verificationGasLimit).toBeGreaterThan(0n);
    expect(result.lookup).toMatchObject({ entryPoint: account.entryPoint.address, transactionHash: undefined });
    expect(result.receiptBefore).toBeUndefined();
    expect(result.released?.userOpHashes).toEqual([result.hash]);
    expect(result.releasedAgain).toMatchObject({ _tag: "ProposalNotOpen", code: -32602 });
    expect(result.unknownCommit).toMatchObject({ _tag: "ProposalNotOpen" });
    // Released, the operation went back to the pool: the next proposal takes it again.
    expect(result.committed?.userOpHashes).toEqual([result.hash]);
  });

  it("writes to the reputation store it is given: the account's factory is counted there", async () => {
    const account = await fx.makeAccount("0.7");
    const reputation = createMemoryReputationStore();
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: recipient(), value: 1n }));
      yield* bundler.sendUserOperation(op, account.entryPoint.address);
      const given = yield* ReputationStorage;
      return { same: given === reputation, entries: yield* Effect.promise(() => reputation.list(account.entryPoint.address)) };
    });
    const stores = Layer.merge(Layer.succeed(ReputationStorage, reputation), Layer.sync(MempoolStorage, () => createMemoryMempoolStore()));
    const layer = Bundler.layer({ validation: { tracerWorkers: 0 }, bundling: { mode: "manual" } }).pipe(
      Layer.provideMerge(Layer.mergeAll(Layer.succeed(Chain, fx.client), Layer.succeed(Relayers, createLocalKeySigner(fx.devnet.relayerKeys)), stores)),
    );
    const { same, entries } = await Effect.runPromise(program.pipe(Effect.provide(layer)));
    expect(same).toBe(true);
    expect(entries.length).toBeGreaterThan(0);
  });

  it("closing the scope stops the engine: its block subscription is gone", async () => {
    let subscribed = 0;
    const polling = createPollingBlockSource({ client: fx.client, clock: systemClock, logger: silentLogger, intervalMs: 50 });
    const blocks = Layer.succeed(Blocks, {
      latest: () => polling.latest(),
      subscribe(listener) {
        subscribed++;
        const unsubscribe = polling.subscribe(listener);
        return () => {
          subscribed--;
          unsubscribe();
        };
      },
    });
    const program = Effect.gen(function* () {
      yield* Bundler;
      return subscribed;
    });
    const layer = Bundler.layer({ validation: { tracerWorkers: 0 } }).pipe(Layer.provide(blocks), Layer.provideMerge(ports()));
    const whileOpen = await Effect.runPromise(program.pipe(Effect.provide(layer)));
    expect(whileOpen).toBe(1);
    expect(subscribed).toBe(0);
  });

  it("bundles with relayers of the program's own accounts (Relayers.layerAccounts): a remote signer signs the bundle", async () => {
    const account = await fx.makeAccount("0.7");
    const local = privateKeyToAccount(fx.devnet.relayerKeys[0]!);
    let signed = 0;
    // A signer that is not a local key: viem's `toAccount` over a signing function, as over a KMS.
    const remote = toAccount({
      address: local.address,
      signTransaction: (transaction) => {
        signed++;
        return local.signTransaction(transaction);
      },
      signMessage: (message) => local.signMessage(message),
      signTypedData: (data) => local.signTypedData(data),
    });
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: recipient(), value: 1n }));
      yield* bundler.sendUserOperation(op, account.entryPoint.address);
      return yield* bundler.sendBundleNow();
    });
    const ports = Layer.mergeAll(Layer.succeed(Chain, fx.client), Relayers.layerAccounts([remote]), memoryStores);
    const layer = Bundler.layer({ validation: { tracerWorkers: 0 }, bundling: { mode: "manual" } }).pipe(Layer.provideMerge(ports));
    const sent = await Effect.runPromise(program.pipe(Effect.provide(layer)));
    expect(sent).toHaveLength(1);
    expect(signed).toBeGreaterThan(0);
  });
});
