import type { EntryPointVersion } from "@bundlekit/devnet";
import { type Hash, pad, parseEther, toEventSelector, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { createDefaultMempoolPolicy } from "../src/mempool/default-mempool-policy.ts";
import type { MempoolPolicy } from "../src/ports/mempool-policy.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { userOperationEventTopic } from "../src/receipt/user-operation-event.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import { engineFixture, rejection } from "./fixtures.ts";

const depositedTopic = toEventSelector("Deposited(address,uint256)");

/** The engine on a real anvil: admission, bundling, inclusion and lookups. */
describe("bundler engine", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());


  it.each<EntryPointVersion>(["0.6", "0.7", "0.8", "0.9"])("follows a v%s operation from pending to included", async (version) => {
    const { bundler } = await fx.makeBundler();
    const changes: StatusChange[] = [];
    bundler.onStatusChange((c) => changes.push(c));
    const account = await fx.makeAccount(version);
    const recipient = privateKeyToAccount(fx.devnet.accountKeys[15]!).address;
    const before = await fx.client.getBalance({ address: recipient });
    const op = await fx.makeOperation(bundler, account, { to: recipient, value: parseEther("0.1") });

    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    const pending = await bundler.getUserOperationByHash(hash);
    expect(pending).toMatchObject({ entryPoint: account.entryPoint.address, transactionHash: undefined, blockNumber: undefined });
    expect(pending!.userOperation).toEqual(op);
    expect(await bundler.getUserOperationReceipt(hash)).toBeUndefined();

    const [transactionHash] = await bundler.sendBundleNow();
    expect(transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await bundler.getUserOperationReceipt(hash);
    expect(receipt).toMatchObject({ userOpHash: hash, sender: account.address, nonce: op.nonce, success: true });
    expect(receipt!.receipt.transactionHash).toBe(transactionHash);
    expect(receipt!.actualGasCost).toBeGreaterThan(0n);
    const included = await bundler.getUserOperationByHash(hash);
    expect(included!.transactionHash).toBe(transactionHash);
    expect(included!.blockNumber).toBe(receipt!.receipt.blockNumber);
    expect(await fx.client.getBalance({ address: recipient })).toBe(before + parseEther("0.1"));
    expect(changes.map((c) => c.status)).toEqual(["pending", "submitted", "included"]);
  });

  it("reports a reverted execution as included with success false", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7", parseEther("0.5"));
    // Estimate a payable call, then ask for more value than the account holds: execution reverts.
    const op = await fx.makeOperation(bundler, account, { to: account.address, value: 1n });
    const reverting = await fx.makeOperation(bundler, account, { to: account.address, value: 1n }, {
      callData: await account.encodeCalls([{ to: fx.devnet.deployments["0.7"].entryPoint, value: parseEther("100") }]),
      callGasLimit: op.callGasLimit + 50_000n,
    });
    const hash = await bundler.sendUserOperation(reverting, account.entryPoint.address);
    await bundler.sendBundleNow();
    const receipt = await bundler.getUserOperationReceipt(hash);
    expect(receipt?.success).toBe(false);
  });

  it("refuses a duplicate and an underpriced replacement, accepts a 10% bump", async () => {
    const { bundler, store } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7");
    const to = privateKeyToAccount(fx.devnet.accountKeys[16]!).address;
    const op = await fx.makeOperation(bundler, account, { to, value: 1n });
    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    const duplicate = await rejection(bundler.sendUserOperation(op, account.entryPoint.address));
    expect(duplicate.code).toBe(RpcErrorCode.invalidParams);
    expect(duplicate.message).toMatch(/already known/);

    const cheap = await fx.makeOperation(bundler, account, { to, value: 2n }, {
      maxFeePerGas: op.maxFeePerGas + op.maxFeePerGas / 20n,
      maxPriorityFeePerGas: op.maxPriorityFeePerGas + op.maxPriorityFeePerGas / 20n,
    });
    expect((await rejection(bundler.sendUserOperation(cheap, account.entryPoint.address))).message).toMatch(/replacement underpriced/);

    const bumped = await fx.makeOperation(bundler, account, { to, value: 3n }, {
      maxFeePerGas: op.maxFeePerGas + op.maxFeePerGas / 10n,
      maxPriorityFeePerGas: op.maxPriorityFeePerGas + op.maxPriorityFeePerGas / 10n,
    });
    const replacement = await bundler.sendUserOperation(bumped, account.entryPoint.address);
    expect((await store.get(hash))?.status).toBe("dropped");
    expect((await store.get(replacement))?.status).toBe("pending");
  });

  it.each<EntryPointVersion>(["0.6", "0.7", "0.8", "0.9"])("rejects a v%s operation signed by the wrong key with -32507", async (version) => {
    const { bundler, store } = await fx.makeBundler();
    const account = await fx.makeAccount(version);
    const op = await fx.makeOperation(bundler, account, { to: account.address, value: 0n });
    const forged = { ...op, signature: await privateKeyToAccount(fx.devnet.accountKeys[14]!).signMessage({ message: "not this op" }) };
    const error = await rejection(bundler.sendUserOperation(forged, account.entryPoint.address));
    expect(error.code).toBe(RpcErrorCode.signatureInvalid);
    expect(error.message).toMatch(/AA24/);
    expect(await store.countByStatus()).toMatchObject({ pending: 0 });
  });

  it("rejects an operation whose account cannot pay with the EntryPoint's AA21 reason", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7", 0n);
    // Estimated as if funded (estimation itself answers AA21 for the account as it is).
    const funded = { [account.address]: { balance: toHex(parseEther("1")) } };
    const op = await fx.makeOperation(bundler, account, { to: account.address, value: 0n }, {}, funded);
    const error = await rejection(bundler.sendUserOperation(op, account.entryPoint.address));
    expect(error.code).toBe(RpcErrorCode.entryPointRejected);
    expect(error.message).toMatch(/AA21/);
  });

  it("bundles every EntryPoint at once even with fewer relayers than EntryPoints", async () => {
    const { bundler } = await fx.makeBundler({ relayerKeys: fx.devnet.relayerKeys.slice(0, 1) });
    const hashes: Hash[] = [];
    for (const version of ["0.6", "0.7", "0.8", "0.9"] as const) {
      const account = await fx.makeAccount(version);
      hashes.push(await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), account.entryPoint.address));
    }
    expect(await bundler.sendBundleNow()).toHaveLength(4);
    for (const hash of hashes) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("bundles a sender's consecutive nonces in order", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7");
    const to = privateKeyToAccount(fx.devnet.accountKeys[16]!).address;
    const first = await fx.makeOperation(bundler, account, { to, value: 1n });
    const firstHash = await bundler.sendUserOperation(first, account.entryPoint.address);
    await bundler.sendBundleNow(); // deploys the account
    // Nonce 2 is estimated and admitted while nonce 1 is still only in the pool.
    const hashes: Hash[] = [];
    for (const nonce of [1n, 2n]) {
      const op = await fx.makeOperation(bundler, account, { to, value: nonce }, { nonce });
      hashes.push(await bundler.sendUserOperation(op, account.entryPoint.address));
    }
    expect(await bundler.sendBundleNow()).toHaveLength(1); // one op per sender per bundle
    await bundler.sendBundleNow();
    for (const hash of [firstHash, ...hashes]) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("estimates and admits an operation queued behind the sender's pooled one with one simulation each, none failing first", async () => {
    const node = fx.countingClient();
    const { bundler } = await fx.makeBundler({ client: node.client });
    const account = await fx.makeAccount("0.7");
    const to = privateKeyToAccount(fx.devnet.accountKeys[16]!).address;
    await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to, value: 1n }), account.entryPoint.address);
    await bundler.sendBundleNow(); // deploys the account
    await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to, value: 1n }, { nonce: 1n }), account.entryPoint.address);

    node.reset();
    const queued = await fx.makeOperation(bundler, account, { to, value: 2n }, { nonce: 2n });
    // The gas search, and its confirmation on the sender's own balance.
    expect(node.requests.eth_call).toBe(2);
    node.reset();
    await bundler.sendUserOperation(queued, account.entryPoint.address);
    expect(node.requests.debug_traceCall).toBe(1);
  });

  it.each<EntryPointVersion>(["0.6", "0.7", "0.8", "0.9"])("v%s: a new account queues its second operation behind the one that deploys it", async (version) => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount(version);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const before = await fx.client.getBalance({ address: to });
    const deploying = await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to, value: 1n }), account.entryPoint.address);
    // Estimated and admitted while the account exists only in the pool's first operation.
    const noFactory = version === "0.6" ? { initCode: "0x" as const } : { factory: undefined, factoryData: undefined };
    const second = await fx.makeOperation(bundler, account, { to, value: 2n }, { nonce: 1n, ...noFactory });
    expect(await fx.client.getCode({ address: account.address })).toBeUndefined();
    const queued = await bundler.sendUserOperation(second, account.entryPoint.address);
    await bundler.sendBundleNow();
    await bundler.sendBundleNow();
    for (const hash of [deploying, queued]) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    expect(await fx.client.getBalance({ address: to })).toBe(before + 3n);
  });

  it("still refuses an operation of an undeployed account with nothing in the pool to deploy it (AA20)", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7");
    const deploying = await fx.makeOperation(bundler, account, { to: account.address });
    // The account is checked before its signature: AA20 comes first.
    const orphan = { ...deploying, nonce: 1n, factory: undefined, factoryData: undefined };
    const error = await rejection(bundler.sendUserOperation(orphan, account.entryPoint.address));
    expect(error.message).toMatch(/^AA20/);
  });

  it("lets an unstaked sender queue 4 operations and refuses a 5th with -32504", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7");
    await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), account.entryPoint.address);
    await bundler.sendBundleNow(); // deploys the account
    for (const nonce of [1n, 2n, 3n, 4n]) {
      await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }, { nonce }), account.entryPoint.address);
    }
    const fifth = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: 5n });
    const error = await rejection(bundler.sendUserOperation(fifth, account.entryPoint.address));
    expect(error.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(error.data).toEqual({ sender: account.address, limit: 4 });
  });

  it.each([
    [true, "one per bundle"],
    [false, "together in one bundle"],
  ])("bundling.uniqueSenders %s: a sender's operations on two nonce keys go %s", async (uniqueSenders) => {
    const { bundler } = await fx.makeBundler({ settings: { bundling: { uniqueSenders } } });
    const account = await fx.makeAccount("0.7");
    await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), account.entryPoint.address);
    await bundler.sendBundleNow(); // deploys the account
    const hashes: Hash[] = [];
    for (const key of [1n, 2n]) {
      const op = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: key << 64n });
      hashes.push(await bundler.sendUserOperation(op, account.entryPoint.address));
    }
    await bundler.sendBundleNow();
    await bundler.sendBundleNow();
    const receipts = await Promise.all(hashes.map((hash) => bundler.getUserOperationReceipt(hash)));
    expect(receipts.map((receipt) => receipt?.success)).toEqual([true, true]);
    const transactions = new Set(receipts.map((receipt) => receipt?.receipt.transactionHash));
    expect(transactions.size).toBe(uniqueSenders ? 2 : 1);
  });

  it("bundling.uniqueSenders false: a sender's next nonce waits in the pool when its earlier operation fails the bundle simulation", async () => {
    const { bundler, store } = await fx.makeBundler({ settings: { bundling: { uniqueSenders: false } } });
    const account = await fx.makeAccount("0.7");
    const entryPoint = account.entryPoint.address;
    await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), entryPoint);
    await bundler.sendBundleNow(); // deploys the account
    // Nonce 1 bids a hundred times more: its prefund stops being payable once the balance falls.
    const draft = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: 1n });
    const first = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: 1n, maxFeePerGas: draft.maxFeePerGas * 100n });
    const firstHash = await bundler.sendUserOperation(first, entryPoint);
    const second = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: 2n });
    const secondHash = await bundler.sendUserOperation(second, entryPoint);
    const prefund = (op: typeof second) => ((op as { verificationGasLimit: bigint }).verificationGasLimit + op.callGasLimit + op.preVerificationGas) * op.maxFeePerGas;
    await fx.client.request({ method: "anvil_setBalance" as never, params: [account.address, toHex(prefund(second) * 4n)] as never });

    expect(await bundler.sendBundleNow()).toEqual([]);
    expect((await store.get(firstHash))?.status).toBe("dropped");
    expect((await store.get(secondHash))?.status).toBe("pending");
    // Alone in the next bundle, nonce 2 is ahead of the account's nonce: it still waits.
    expect(await bundler.sendBundleNow()).toEqual([]);
    expect((await store.get(secondHash))?.status).toBe("pending");

    // Once nonce 1 is sent again, both go into one bundle.
    const replacement = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: 1n });
    const replacementHash = await bundler.sendUserOperation(replacement, entryPoint);
    await bundler.sendBundleNow();
    const receipts = await Promise.all([replacementHash, secondHash].map((hash) => bundler.getUserOperationReceipt(hash)));
    expect(receipts.map((receipt) => receipt?.success)).toEqual([true, true]);
  });

  it("holds an unstaked sender to mempool.sameSenderCount", async () => {
    const { bundler } = await fx.makeBundler({ settings: { mempool: { sameSenderCount: 2 } } });
    const account = await fx.makeAccount("0.7");
    await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), account.entryPoint.address);
    await bundler.sendBundleNow(); // deploys the account
    for (const nonce of [1n, 2n]) {
      await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }, { nonce }), account.entryPoint.address);
    }
    const third = await fx.makeOperation(bundler, account, { to: account.address }, { nonce: 3n });
    const error = await rejection(bundler.sendUserOperation(third, account.entryPoint.address));
    expect(error.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(error.data).toEqual({ sender: account.address, limit: 2 });
  });

  it("bundles what a custom mempool policy selects, in its order", async () => {
    // A policy that takes the lowest priority fee first, two operations per bundle.
    const cheapestFirst: MempoolPolicy = {
      name: "cheapest-first",
      admit: createDefaultMempoolPolicy().admit,
      select: (candidates) =>
        [...candidates].sort((a, b) => Number(a.userOperation.maxPriorityFeePerGas - b.userOperation.maxPriorityFeePerGas)).slice(0, 2),
    };
    const { bundler } = await fx.makeBundler({ policy: cheapestFirst });
    const sent: { hash: Hash; priority: bigint }[] = [];
    for (const bump of [3n, 1n, 2n]) {
      const account = await fx.makeAccount("0.7");
      const draft = await fx.makeOperation(bundler, account, { to: account.address });
      const priority = draft.maxPriorityFeePerGas + bump;
      const op = await fx.makeOperation(bundler, account, { to: account.address }, { maxPriorityFeePerGas: priority, maxFeePerGas: draft.maxFeePerGas + bump });
      sent.push({ hash: await bundler.sendUserOperation(op, account.entryPoint.address), priority });
    }
    const bundles = await bundler.sendBundleNow();
    const orders = await Promise.all(
      bundles.map(async (hash) =>
        (await fx.client.getTransactionReceipt({ hash })).logs.filter((log) => log.topics[0] === userOperationEventTopic).map((log) => log.topics[1]),
      ),
    );
    const byPriority = [...sent].sort((a, b) => Number(a.priority - b.priority)).map((s) => s.hash);
    // The policy's two in its order; the third went back to the pool and into a second bundle.
    expect(orders).toEqual([byPriority.slice(0, 2), byPriority.slice(2)]);
    expect((await bundler.getUserOperationReceipt(byPriority[2]!))?.success).toBe(true);
  });

  it("finds operations included before a restart from chain logs", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.8");
    const op = await fx.makeOperation(bundler, account, { to: account.address, value: 0n });
    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    await bundler.sendBundleNow();
    const before = await bundler.getUserOperationReceipt(hash);

    const { bundler: restarted } = await fx.makeBundler({ store: createMemoryMempoolStore() });
    const receipt = await restarted.getUserOperationReceipt(hash);
    expect(receipt).toEqual({ ...before, receipt: { ...before!.receipt, confirmations: receipt!.receipt.confirmations } });
    const lookup = await restarted.getUserOperationByHash(hash);
    expect(lookup?.userOperation).toEqual(op);
    expect(lookup?.transactionHash).toBe(before!.receipt.transactionHash);
  });

  it("searches the chain for such operations only within receiptLookupRange blocks", async () => {
    const { bundler } = await fx.makeBundler();
    const account = await fx.makeAccount("0.7");
    const hash = await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), account.entryPoint.address);
    await bundler.sendBundleNow();
    await fx.client.request({ method: "anvil_mine", params: ["0x10"] } as never); // 16 blocks later

    const { bundler: near } = await fx.makeBundler({ store: createMemoryMempoolStore(), settings: { tracking: { receiptLookupBlocks: 8 } } });
    expect(await near.getUserOperationReceipt(hash)).toBeUndefined();
    expect(await near.getUserOperationByHash(hash)).toBeUndefined();
    const { bundler: far } = await fx.makeBundler({ store: createMemoryMempoolStore(), settings: { tracking: { receiptLookupBlocks: 32 } } });
    expect((await far.getUserOperationReceipt(hash))?.success).toBe(true);
    expect((await far.getUserOperationByHash(hash))?.transactionHash).toBeDefined();
  });

  it("gives each operation only the logs its execution emitted", async () => {
    const { bundler } = await fx.makeBundler({ settings: { bundling: { maxOperations: 10 } } });
    const accounts = await Promise.all([fx.makeAccount("0.7"), fx.makeAccount("0.7")]);
    const hashes: Hash[] = [];
    for (const account of accounts) {
      // Paying the EntryPoint deposits for the sender: the EntryPoint emits Deposited(sender, …).
      const op = await fx.makeOperation(bundler, account, { to: account.entryPoint.address, value: 1000n });
      hashes.push(await bundler.sendUserOperation(op, account.entryPoint.address));
    }
    expect(await bundler.sendBundleNow()).toHaveLength(1);
    const receipts = await Promise.all(hashes.map((h) => bundler.getUserOperationReceipt(h)));
    expect(receipts[0]!.receipt.transactionHash).toBe(receipts[1]!.receipt.transactionHash);
    receipts.forEach((receipt, i) => {
      const deposits = receipt!.logs.filter((log) => log.topics[0] === depositedTopic);
      expect(deposits.map((log) => log.topics[1])).toEqual([pad(accounts[i]!.address.toLowerCase() as Hash)]);
      expect(receipt!.logs.some((log) => log.topics[0] === userOperationEventTopic)).toBe(false);
    });
  });
});
