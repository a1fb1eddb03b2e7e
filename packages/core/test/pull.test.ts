import { type Address, concat, createWalletClient, type Hex, http, parseTransaction, verifyTypedData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bundleGasOf } from "../src/bundle/bundle-gas.ts";
import { type BundlerSettingsInput, mergeBundlerSettings } from "../src/engine/settings.ts";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { BundlerConfigError } from "../src/errors/bundler-config-error.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { Clock } from "../src/ports/clock.ts";
import { engineFixture, rejection } from "./fixtures.ts";
import { manualClock } from "./manual-clock.ts";
import { preconfirmationTypedData } from "../src/preconfirmation/preconfirmation-typed-data.ts";
import { recordStatusChanges } from "./status-changes.ts";

/**
 * A forwarder: calls the address in the first 20 bytes of its calldata with the rest, and reverts
 * when that call does. (CALLDATACOPY the rest to memory 0, CALL with no value, JUMPI past a REVERT.)
 */
const forwarderCode: Hex = "0x601436038060145f375f5f825f5f5f3560601c5af1601b575f5ffd5b00";

/** The pull path on a chain that mines when the sequencer says so. */
describe("pull path: proposeBundle, commitBundle, releaseBundle", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  const engines: Bundler[] = [];
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.stop();
    await fx.client.request({ method: "evm_setAutomine" as never, params: [true] as never });
  });
  afterAll(() => fx?.devnet.stop());

  const sequencerKey = () => fx.devnet.accountKeys[12]!;
  const sequencer = () => privateKeyToAccount(sequencerKey());
  const recipient = (): Address => privateKeyToAccount(fx.devnet.accountKeys[11]!).address;

  /** The operator's preconfirmation key. */
  const preconfirmationSigner = () => privateKeyToAccount(fx.devnet.accountKeys[10]!);

  async function pullEngine(settings: BundlerSettingsInput = {}, clock?: Clock) {
    const { bundler, store } = await fx.makeBundler({ clock, preconfirmationSigner: preconfirmationSigner(), settings: mergeBundlerSettings({ bundling: { mode: "pull" } }, settings) });
    engines.push(bundler);
    return { bundler, store, ...recordStatusChanges(bundler) };
  }

  async function admitted(bundler: Bundler, version: "0.7" | "0.8" | "0.9" = "0.7") {
    const account = await fx.makeAccount(version);
    const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
    return { hash: await bundler.sendUserOperation(op, account.entryPoint.address), op };
  }

  /** What a block builder knows about the next block. */
  async function nextBlock(gasBudget = 10_000_000n) {
    const latest = await fx.client.getBlock();
    return { gasBudget, baseFee: latest.baseFeePerGas!, blockNumber: latest.number + 1n, timestamp: latest.timestamp + 1n, from: sequencer().address };
  }

  it.each(["0.7", "0.9"] as const)("v%s: proposes the policy's bundle for the block, claimed until the sequencer commits it: preconfirmed, then included", async (version) => {
    const { bundler, store, changes, change } = await pullEngine();
    const { hash } = await admitted(bundler, version);
    await fx.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    const block = await nextBlock();
    const proposal = await bundler.proposeBundle({ ...block, signer: sequencer() });
    expect(proposal).toMatchObject({ entryPoint: fx.entryPoints[version], blockNumber: block.blockNumber, userOpHashes: [hash], to: fx.entryPoints[version] });
    expect((await store.get(hash))?.status).toBe("bundling");
    // Claimed: a second builder gets nothing.
    expect(await bundler.proposeBundle(block)).toBeUndefined();

    await bundler.commitBundle(proposal!.id);
    const promise = { userOpHash: hash, entryPoint: fx.entryPoints[version], chainId: fx.devnet.chain.id, blockNumber: block.blockNumber, transactionHash: proposal!.transactionHash! };
    const preconfirmation = { ...promise, signer: preconfirmationSigner().address, signature: expect.stringMatching(/^0x[0-9a-f]{130}$/), status: "promised" };
    expect(changes.at(-1)).toEqual({ userOpHash: hash, status: "preconfirmed", transactionHash: proposal!.transactionHash, blockNumber: block.blockNumber, preconfirmation });
    expect(await bundler.getUserOperationByHash(hash)).toMatchObject({ transactionHash: proposal!.transactionHash, blockNumber: block.blockNumber, preconfirmation });
    // A user holds the operator to it with viem alone: the signature is the key's over the promise.
    const { signature } = changes.at(-1)!.preconfirmation!;
    expect(await verifyTypedData({ ...preconfirmationTypedData(promise), address: preconfirmationSigner().address, signature: signature! })).toBe(true);
    expect(await verifyTypedData({ ...preconfirmationTypedData({ ...promise, blockNumber: block.blockNumber + 1n }), address: preconfirmationSigner().address, signature: signature! })).toBe(false);

    await fx.client.sendRawTransaction({ serializedTransaction: proposal!.signedTransaction! });
    await fx.client.request({ method: "evm_mine" as never });
    bundler.start();
    await change(hash, "included");
    const receipt = await bundler.getUserOperationReceipt(hash);
    expect(receipt?.success).toBe(true);
    expect(receipt!.receipt.blockNumber).toBe(block.blockNumber);
    expect(changes.filter((c) => c.userOpHash === hash).map((c) => c.status)).toEqual(["pending", "preconfirmed", "included"]);
    expect((await bundler.getUserOperationByHash(hash))?.preconfirmation).toEqual({ ...preconfirmation, status: "kept" });
  });

  it("lets the caller sign: commit takes the hash of the transaction the block holds", async () => {
    const { bundler, changes } = await pullEngine();
    const { hash } = await admitted(bundler, "0.8");
    const block = await nextBlock();
    const proposal = await bundler.proposeBundle(block);
    expect(proposal?.signedTransaction).toBeUndefined();
    expect((await rejection(bundler.commitBundle(proposal!.id))).code).toBe(RpcErrorCode.invalidParams);
    const wallet = createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: sequencer() });
    const transactionHash = await wallet.sendTransaction({ to: proposal!.to, data: proposal!.data, gas: proposal!.gas, ...proposal!.fees });
    await bundler.commitBundle(proposal!.id, { transactionHash });
    await bundler.sendBundleNow(); // drives the tracker to the receipt
    expect(changes.filter((c) => c.userOpHash === hash).map((c) => c.status)).toEqual(["pending", "preconfirmed", "included"]);
  });

  it("keeps a proposal pulled before the engine's first reconciliation: only what it claimed before a restart goes back to the pool", async () => {
    const { bundler, store } = await pullEngine();
    const { hash } = await admitted(bundler);
    const block = await nextBlock();
    expect((await bundler.proposeBundle(block))?.userOpHashes).toEqual([hash]);
    // The engine's first reconciliation, as its first tick would run it.
    await bundler.sendBundleNow();
    expect((await store.get(hash))?.status).toBe("bundling");
    expect(await bundler.proposeBundle(block)).toBeUndefined();
  });

  it("holds a relayer lease it signed a proposal with: given back when the proposal is released, when it lapses, and once its committed transaction is mined", async () => {
    const { bundler } = await pullEngine({ bundling: { proposalLeaseMs: 200 } });
    const leases: { address: Address; released: boolean }[] = [];
    /** A lease of the sequencer's key that records its release. */
    const lease = () => {
      const held = { address: sequencer().address, released: false };
      leases.push(held);
      const release = () => {
        held.released = true;
      };
      return { address: held.address, signTransaction: sequencer().signTransaction, release };
    };
    await admitted(bundler);
    const released = await bundler.proposeBundle({ ...(await nextBlock()), signer: lease() });
    expect(leases[0]!.released).toBe(false);
    await bundler.releaseBundle(released!.id);
    expect(leases[0]!.released).toBe(true);

    const lapsed = await bundler.proposeBundle({ ...(await nextBlock()), signer: lease() });
    expect(lapsed).toBeDefined();
    await expect.poll(() => leases[1]!.released).toBe(true);

    const committed = await bundler.proposeBundle({ ...(await nextBlock()), signer: lease() });
    await bundler.commitBundle(committed!.id);
    expect(leases[2]!.released).toBe(false);
    await fx.client.sendRawTransaction({ serializedTransaction: committed!.signedTransaction! });
    bundler.start();
    await expect.poll(() => leases[2]!.released).toBe(true);
  });

  it("runs in pull mode without a relayer signer: the builder signs, commits, and the operation is included", async () => {
    const { bundler } = await fx.makeBundler({ signer: "none", settings: { bundling: { mode: "pull" } } });
    engines.push(bundler);
    const { changes } = recordStatusChanges(bundler);
    expect(bundler.relayers).toEqual([]);
    const { hash } = await admitted(bundler);
    const proposal = await bundler.proposeBundle({ ...(await nextBlock()), signer: sequencer() });
    expect(proposal?.userOpHashes).toEqual([hash]);
    await fx.client.sendRawTransaction({ serializedTransaction: proposal!.signedTransaction! });
    await bundler.commitBundle(proposal!.id);
    bundler.start();
    await expect.poll(async () => (await bundler.getUserOperationReceipt(hash))?.receipt.transactionHash).toBe(proposal!.transactionHash);
    // The receipt is served from the recorded transaction once mined, maybe before the tracker follows it.
    await expect.poll(() => changes.filter((c) => c.userOpHash === hash).map((c) => c.status)).toEqual(["pending", "preconfirmed", "included"]);
    // It cannot push bundles: it stays in pull mode.
    expect(() => bundler.setBundlingMode("auto")).toThrow(expect.objectContaining({ kind: "invalidParams", field: "mode" }));
    expect(bundler.bundling.mode).toBe("pull");
  });

  it.each(["auto", "manual"] as const)("refuses to create a %s-mode engine without a relayer signer, naming the setting", async (mode) => {
    const error = await fx.makeBundler({ signer: "none", settings: { bundling: { mode } } }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BundlerConfigError);
    expect(error).toMatchObject({ setting: "signer" });
    expect((error as Error).message).toContain(`signer is required in ${mode} bundling mode`);
  });

  it("puts released operations back in the pool at once, and lapsed ones after proposalLeaseMs", async () => {
    const clock = manualClock();
    const { bundler, store } = await pullEngine({ bundling: { proposalLeaseMs: 300 } }, clock);
    const { hash } = await admitted(bundler);
    const block = await nextBlock();
    const released = await bundler.proposeBundle(block);
    await bundler.releaseBundle(released!.id);
    expect((await store.get(hash))?.status).toBe("pending");

    const lapsing = await bundler.proposeBundle(block);
    expect(lapsing?.userOpHashes).toEqual([hash]);
    clock.advance(299);
    expect(await bundler.proposeBundle(block)).toBeUndefined(); // still claimed
    clock.advance(1);
    const again = await bundler.proposeBundle(block);
    expect(again?.userOpHashes).toEqual([hash]);
    const error = await rejection(bundler.commitBundle(lapsing!.id));
    expect(error.code).toBe(RpcErrorCode.invalidParams);
    expect(error.message).toContain("lapsed");
  });

  it("holds a committed bundle's operations for claimLeaseMs, not the proposal's lease: no other engine on the store adopts them meanwhile", async () => {
    const clock = manualClock();
    const { bundler, store } = await pullEngine({ bundling: { proposalLeaseMs: 300, claimLeaseMs: 60_000 } }, clock);
    const { hash } = await admitted(bundler);
    const proposal = await bundler.proposeBundle(await nextBlock());
    const wallet = createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: sequencer() });
    await fx.client.request({ method: "evm_setAutomine" as never, params: [false] as never }); // the block is yet to come
    const transactionHash = await wallet.sendTransaction({ to: proposal!.to, data: proposal!.data, gas: proposal!.gas, ...proposal!.fees });
    await bundler.commitBundle(proposal!.id, { transactionHash });
    const adopt = () => store.adoptSubmitted({ claimant: "another engine", leaseMs: 60_000, now: clock.now(), limit: 10 });
    clock.advance(59_999);
    expect(await adopt()).toEqual([]);
    clock.advance(1);
    expect((await adopt()).map((entry) => entry.userOpHash)).toEqual([hash]);
  });

  it("keeps a bundle within the block's gas budget and leaves operations that cannot pay its base fee", async () => {
    const { bundler } = await pullEngine();
    const { op } = await admitted(bundler);
    const block = await nextBlock();
    expect(await bundler.proposeBundle({ ...block, gasBudget: bundleGasOf(op) })).toBeUndefined();
    expect(await bundler.proposeBundle({ ...block, baseFee: op.maxFeePerGas + 1n })).toBeUndefined();
    expect((await bundler.proposeBundle(block))?.gas).toBeLessThanOrEqual(block.gasBudget);
  });

  it.each([true, false])(
    "eip2930 %s: the proposal and the transaction the engine signs carry the access list only when on",
    async (eip2930) => {
      const { bundler } = await pullEngine({ bundling: { accessList: eip2930 } });
      const { op } = await admitted(bundler);
      const proposal = await bundler.proposeBundle({ ...(await nextBlock()), signer: sequencer() });
      const signed = parseTransaction(proposal!.signedTransaction!);
      expect(signed.type).toBe("eip1559");
      expect(signed.accessList ?? []).toEqual(proposal!.accessList ?? []);
      await bundler.commitBundle(proposal!.id);
      const transactionHash = await fx.client.sendRawTransaction({ serializedTransaction: proposal!.signedTransaction! });
      const mined = await fx.client.getTransaction({ hash: transactionHash });
      const listed = (mined.accessList ?? []).map((entry) => entry.address.toLowerCase());
      if (eip2930) {
        expect(listed).toContain(fx.entryPoints["0.7"].toLowerCase());
        expect(listed).toContain(op.sender.toLowerCase());
      } else {
        expect(proposal!.accessList).toBeUndefined();
        expect(listed).toEqual([]);
      }
    },
  );

  it("breaks a preconfirmation whose promised block passes without the operation: preconfirmation_broken with the reason, then back in the pool", async () => {
    const { bundler, store, changes, change, statuses } = await pullEngine();
    const { hash } = await admitted(bundler);
    const block = await nextBlock();
    const proposal = await bundler.proposeBundle({ ...block, signer: sequencer() });
    await bundler.commitBundle(proposal!.id); // … and the sequencer never sends it
    await fx.client.request({ method: "evm_mine" as never });
    bundler.start();
    const reason = `the promised block ${block.blockNumber} passed without it`;
    const broken = await change(hash, "preconfirmation_broken");
    expect(broken).toMatchObject({ transactionHash: proposal!.transactionHash, blockNumber: block.blockNumber, reason });
    expect(broken.preconfirmation).toMatchObject({ status: "broken", reason, blockNumber: block.blockNumber, signer: preconfirmationSigner().address });
    await change(hash, "pending", 1);
    expect(statuses(hash)).toEqual(["pending", "preconfirmed", "preconfirmation_broken", "pending"]);
    expect((await store.get(hash))?.status).toBe("pending");
    const lookup = await bundler.getUserOperationByHash(hash);
    expect(lookup).toMatchObject({ transactionHash: undefined, blockNumber: undefined, preconfirmation: { status: "broken", reason } });
    expect(changes.filter((c) => c.status === "included")).toEqual([]);
  });

  it("recognises the operation included by another transaction (a wrapper contract's call) in the promised block: included with that transaction, the preconfirmation kept", async () => {
    const { bundler, change, statuses } = await pullEngine();
    const { hash } = await admitted(bundler);
    const block = await nextBlock();
    const proposal = await bundler.proposeBundle({ ...block, signer: sequencer() });
    await bundler.commitBundle(proposal!.id); // commits transaction X …
    // … but the builder places the bundle inside a transaction of its own: a contract that
    // forwards its calldata after the first 20 bytes to the address in them.
    const wrapper: Address = "0x000000000000000000000000000000000000b0d1";
    await fx.client.request({ method: "anvil_setCode" as never, params: [wrapper, forwarderCode] as never });
    const builder = createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: privateKeyToAccount(fx.devnet.accountKeys[13]!) });
    const outer = await builder.sendTransaction({ to: wrapper, data: concat([proposal!.to, proposal!.data]), gas: proposal!.gas + 50_000n, ...proposal!.fees });
    const mined = await fx.client.waitForTransactionReceipt({ hash: outer });
    expect(mined.blockNumber).toBe(block.blockNumber);
    bundler.start();
    expect(await change(hash, "included")).toMatchObject({ transactionHash: outer, success: true });
    expect(statuses(hash)).toEqual(["pending", "preconfirmed", "included"]);
    expect((await bundler.getUserOperationReceipt(hash))?.receipt.transactionHash).toBe(outer);
    expect(await bundler.getUserOperationByHash(hash)).toMatchObject({
      transactionHash: outer,
      blockNumber: block.blockNumber,
      preconfirmation: { status: "kept", transactionHash: proposal!.transactionHash, blockNumber: block.blockNumber },
    });
  });

  it("reports a committed bundle submitted, not preconfirmed, when the engine is not in pull mode", async () => {
    const { bundler, changes } = await pullEngine({ bundling: { mode: "manual" } });
    const { hash } = await admitted(bundler);
    const proposal = await bundler.proposeBundle({ ...(await nextBlock()), signer: sequencer() });
    await bundler.commitBundle(proposal!.id);
    expect(changes.at(-1)).toEqual({ userOpHash: hash, status: "submitted", transactionHash: proposal!.transactionHash });
    expect((await bundler.getUserOperationByHash(hash))?.blockNumber).toBeUndefined();
    await fx.client.sendRawTransaction({ serializedTransaction: proposal!.signedTransaction! });
  });
});
