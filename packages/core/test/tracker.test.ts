import { type Address, createWalletClient, type Hash, type Hex, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { type BundlerSettingsInput, mergeBundlerSettings } from "../src/engine/settings.ts";
import { userOperationEventTopic } from "../src/receipt/user-operation-event.ts";
import type { RelayerSigner } from "../src/ports/relayer-signer.ts";
import { engineFixture, testSigner } from "./fixtures.ts";
import { recordStatusChanges } from "./status-changes.ts";

/** The test signer, counting the leases it refused because its every relayer was leased already. */
function refusalCountingSigner(keys: readonly Hex[]): RelayerSigner & { readonly refused: number; refusals(count: number): Promise<void> } {
  const signer = testSigner(keys);
  let refused = 0;
  const waiters = new Set<() => void>();
  return {
    addresses: signer.addresses,
    lease() {
      const lease = signer.lease();
      if (!lease) {
        refused++;
        for (const wake of [...waiters]) wake();
      }
      return lease;
    },
    get refused() {
      return refused;
    },
    /** Resolves once `count` leases in all have been refused. */
    refusals: (count) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (refused < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
  };
}

/**
 * The transaction tracker on a chain that mines only when told: bundles left unmined are
 * replaced or cancelled, relayers wait for their nonce, and a nonce taken by someone else puts
 * the operations back.
 */
describe("transaction tracker", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  const running: Bundler[] = [];
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterEach(async () => {
    for (const bundler of running.splice(0)) await bundler.stop();
    await automine(true);
  });
  afterAll(() => fx?.devnet.stop());

  const recipient = (): Address => privateKeyToAccount(fx.devnet.accountKeys[13]!).address;
  const automine = (on: boolean) => fx.client.request({ method: "evm_setAutomine" as never, params: [on] as never });
  const mine = (blocks = 1) => fx.client.request({ method: "anvil_mine" as never, params: [`0x${blocks.toString(16)}`] as never });
  const fast: BundlerSettingsInput = { bundling: { mode: "auto", intervalMs: 20 }, tracking: { blockPollingIntervalMs: 20, replaceAfterBlocks: 2 } };

  /** Once the relayer's pending nonce (the node's pool) has moved past `nonce`: a replacement or a cancellation is in. */
  const pendingNonceAbove = (relayer: Address, nonce: number) =>
    expect.poll(() => fx.client.getTransactionCount({ address: relayer, blockTag: "pending" })).toBeGreaterThan(nonce);

  /** A running engine (auto bundling) with its status changes recorded. */
  async function started(options: Parameters<typeof fx.makeBundler>[0] = {}) {
    const { bundler, store } = await fx.makeBundler({ ...options, settings: mergeBundlerSettings(fast, options.settings) });
    running.push(bundler);
    return { bundler, store, ...recordStatusChanges(bundler) };
  }

  async function admitted(bundler: Bundler, version: "0.7" | "0.8" | "0.9", fees: { maxFeeMultiplier?: bigint; tipMultiplier?: bigint } = {}) {
    const account = await fx.makeAccount(version, parseEther("0.5"));
    const draft = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
    const op = await fx.makeOperation(
      bundler,
      account,
      { to: recipient(), value: 1n },
      { maxFeePerGas: draft.maxFeePerGas * (fees.maxFeeMultiplier ?? 1n), maxPriorityFeePerGas: draft.maxPriorityFeePerGas * (fees.tipMultiplier ?? 1n) },
    );
    return bundler.sendUserOperation(op, account.entryPoint.address);
  }

  it("replaces a bundle left unmined with fees raised by bundleFeeBumpPercent, at the same nonce", async () => {
    const { bundler, change } = await started({ settings: { bundling: { mode: "manual" } } });
    const hash = await admitted(bundler, "0.7", { maxFeeMultiplier: 4n, tipMultiplier: 4n });
    await automine(false);
    bundler.setBundlingMode("auto");
    bundler.start();
    const first = await fx.client.getTransaction({ hash: (await change(hash, "submitted")).transactionHash! });
    await fx.client.request({ method: "anvil_dropTransaction" as never, params: [first.hash] as never });
    await mine(2);
    // The replacement is in the node's pool once the relayer's pending nonce moves past the mined one.
    await pendingNonceAbove(first.from, first.nonce);
    await mine();
    const included = await change(hash, "included");
    expect(included.transactionHash).not.toBe(first.hash);
    const replacement = await fx.client.getTransaction({ hash: included.transactionHash! });
    expect(replacement.nonce).toBe(first.nonce);
    expect(replacement.from).toBe(first.from);
    expect(replacement.maxFeePerGas!).toBeGreaterThanOrEqual((first.maxFeePerGas! * 115n) / 100n);
    expect(replacement.maxPriorityFeePerGas!).toBeGreaterThanOrEqual((first.maxPriorityFeePerGas! * 115n) / 100n);
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it.each([
    ["maxFeePerGas", {}],
    ["maxPriorityFeePerGas", { maxFeeMultiplier: 4n }],
  ] as const)("cancels a bundle whose operations' %s would not repay a replacement, and puts them back in the pool", async (_fee, fees) => {
    const { bundler, change } = await started({ settings: { bundling: { mode: "manual" } } });
    const hash = await admitted(bundler, "0.8", fees);
    await automine(false);
    bundler.setBundlingMode("auto");
    bundler.start();
    const first = await fx.client.getTransaction({ hash: (await change(hash, "submitted")).transactionHash! });
    await fx.client.request({ method: "anvil_dropTransaction" as never, params: [first.hash] as never });
    await mine(2);
    await pendingNonceAbove(first.from, first.nonce);
    bundler.setBundlingMode("manual");
    await mine();
    const back = await change(hash, "pending", 1);
    expect(back.reason).toBe("its bundle was cancelled; back in the pool");
    const cancellation = await fx.client.getTransaction({ hash: back.transactionHash! });
    expect(cancellation).toMatchObject({ from: first.from, to: first.from, value: 0n, nonce: first.nonce, input: "0x" });
  });

  it("keeps a relayer until its bundle is mined: the next bundle waits instead of queueing behind it", async () => {
    const signer = refusalCountingSigner(fx.devnet.relayerKeys.slice(0, 1));
    const { bundler, change } = await started({ signer, settings: { bundling: { mode: "manual" } } });
    const first = await admitted(bundler, "0.7");
    const second = await admitted(bundler, "0.8");
    await automine(false);
    bundler.setBundlingMode("auto");
    bundler.start();
    const sent = await Promise.race([change(first, "submitted"), change(second, "submitted")]);
    const [waiting] = sent.userOpHash === first ? [second] : [first];
    // The engine looks for a relayer for the other bundle twice more and finds its only one still leased
    // (or, wrongly, sends the other bundle behind the first).
    await Promise.race([signer.refusals(signer.refused + 2), change(waiting!, "submitted")]);
    const relayer = privateKeyToAccount(fx.devnet.relayerKeys[0]!).address;
    const latest = await fx.client.getTransactionCount({ address: relayer });
    expect(await fx.client.getTransactionCount({ address: relayer, blockTag: "pending" })).toBe(latest + 1);
    expect((await bundler.getUserOperationByHash(waiting))?.transactionHash).toBeUndefined();
    await mine();
    await change(sent.userOpHash, "included");
    const next = await change(waiting, "submitted");
    await mine();
    await change(waiting, "included");
    expect((await fx.client.getTransaction({ hash: next.transactionHash! })).nonce).toBe(latest + 1);
  });

  it("puts operations back when another transaction takes their bundle's nonce, then includes them with the next", async () => {
    const { bundler, change } = await started({ relayerKeys: fx.devnet.relayerKeys.slice(1, 2), settings: { bundling: { mode: "manual" } } });
    const hash = await admitted(bundler, "0.7", { maxFeeMultiplier: 4n });
    await automine(false);
    bundler.setBundlingMode("auto");
    bundler.start();
    const first = await fx.client.getTransaction({ hash: (await change(hash, "submitted")).transactionHash! });
    await fx.client.request({ method: "anvil_dropTransaction" as never, params: [first.hash] as never });
    const relayer = createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: privateKeyToAccount(fx.devnet.relayerKeys[1]!) });
    await relayer.sendTransaction({ to: recipient(), value: 1n, nonce: first.nonce });
    await mine();
    const back = await change(hash, "pending", 1);
    expect(back.reason).toBe("its bundle's nonce was taken by another transaction; back in the pool");
    await change(hash, "submitted", 1);
    await mine();
    expect((await change(hash, "included")).success).toBe(true);
  });

  it("when a bundle reverts on chain, the operation not at fault is bundled again and included, and the culprit is dropped with its reason", async () => {
    const { bundler, change } = await started({ relayerKeys: fx.devnet.relayerKeys.slice(0, 1), settings: { bundling: { mode: "manual" } } });
    const innocentAccount = await fx.makeAccount("0.7", parseEther("0.5"));
    const culpritAccount = await fx.makeAccount("0.7", parseEther("0.5"));
    const send = async (account: typeof innocentAccount) =>
      bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }), account.entryPoint.address);
    const innocent = await send(innocentAccount);
    const culprit = await send(culpritAccount);
    await automine(false);
    bundler.setBundlingMode("auto");
    bundler.start();
    const [first, second] = await Promise.all([change(innocent, "submitted"), change(culprit, "submitted")]);
    expect(first.transactionHash).toBe(second.transactionHash);
    // Before the bundle is mined, the culprit's account loses the ETH it would pay its prefund with (AA21).
    await fx.client.request({ method: "anvil_setBalance" as never, params: [culpritAccount.address, "0x0"] as never });
    await mine();
    expect((await fx.client.getTransactionReceipt({ hash: first.transactionHash! })).status).toBe("reverted");
    for (const hash of [innocent, culprit]) {
      expect(await change(hash, "pending", 1)).toMatchObject({ reason: "its bundle transaction reverted; back in the pool" });
    }
    expect((await change(culprit, "dropped")).reason).toMatch(/^AA21 /);
    await change(innocent, "submitted", 1);
    await mine();
    expect((await change(innocent, "included")).success).toBe(true);
    expect((await bundler.getUserOperationReceipt(innocent))?.success).toBe(true);
    expect(await bundler.getUserOperationReceipt(culprit)).toBeUndefined();
  });

  it("follows a mined bundle deeper from the chain's heads alone: no receipt read after its inclusion", async () => {
    const node = fx.countingClient();
    const { bundler, change } = await started({ client: node.client });
    const hash = await admitted(bundler, "0.7");
    bundler.start();
    await change(hash, "included");
    node.reset();
    for (const confirmations of [2n, 3n, 4n]) {
      await mine();
      // Once the tracker has followed the new block, the receipt counts it.
      await expect.poll(async () => (await bundler.getUserOperationReceipt(hash))?.receipt.confirmations).toBe(confirmations);
    }
    expect(node.requests.eth_getTransactionReceipt ?? 0).toBe(0);
  });

  describe("reorgs", () => {
    /** An operation included by a running engine, and the block it landed in. */
    async function includedOperation() {
      const engine = await started({ settings: { bundling: { mode: "manual" } } });
      const hash = await admitted(engine.bundler, "0.7");
      engine.bundler.setBundlingMode("auto");
      engine.bundler.start();
      const included = await engine.change(hash, "included");
      const receipt = await fx.client.getTransactionReceipt({ hash: included.transactionHash! });
      return { ...engine, hash, first: receipt };
    }

    const eventsOf = async (userOpHash: Hash) =>
      (await fx.client.request({ method: "eth_getLogs", params: [{ fromBlock: "0x0", toBlock: "latest", topics: [userOperationEventTopic, userOpHash] }] })).length;

    it.each([
      ["anvil_reorg", (depth: number) => fx.client.request({ method: "anvil_reorg" as never, params: [depth, []] as never })],
      ["anvil_rollback", (depth: number) => fx.client.request({ method: "anvil_rollback" as never, params: [depth] as never })],
    ] as const)("after %s takes its block, the operation is reported back, bundled again and included once on the canonical chain", async (_, reorg) => {
      const { bundler, hash, first, change, until } = await includedOperation();
      const depth = Number((await fx.client.getBlockNumber()) - first.blockNumber) + 1;
      await reorg(depth);
      const back = await until(
        (all) => all.find((c) => c.userOpHash === hash && (c.status === "pending" || c.status === "submitted") && c.reason?.startsWith("its block left the canonical chain")),
        "the operation reported back",
      );
      expect(back).toMatchObject({ status: "pending", reason: "its block left the canonical chain; back in the pool" });
      const again = await change(hash, "included", 1);
      const receipt = await bundler.getUserOperationReceipt(hash);
      expect(receipt?.receipt.transactionHash).toBe(again.transactionHash);
      expect(receipt?.receipt.blockHash).not.toBe(first.blockHash);
      expect((await bundler.getUserOperationByHash(hash))?.blockHash).toBe(receipt?.receipt.blockHash);
      expect(await eventsOf(hash)).toBe(1);
    });

    it("after a rollback that leaves its transaction pending again, the operation returns to submitted and is followed to its inclusion", async () => {
      const { hash, first, change, until } = await includedOperation();
      const raw = await fx.client.request({ method: "eth_getRawTransactionByHash", params: [first.transactionHash] });
      await automine(false);
      await fx.client.request({ method: "anvil_rollback" as never, params: [Number((await fx.client.getBlockNumber()) - first.blockNumber) + 1] as never });
      await fx.client.sendRawTransaction({ serializedTransaction: raw! });
      const back = await until((all) => all.find((c) => c.userOpHash === hash && c.reason?.startsWith("its block left")), "the operation reported back");
      expect(back).toMatchObject({ status: "submitted", transactionHash: first.transactionHash, reason: "its block left the canonical chain" });
      await mine();
      const again = await change(hash, "included", 1);
      expect(again.transactionHash).toBe(first.transactionHash);
      expect(await eventsOf(hash)).toBe(1);
    });
  });
});
