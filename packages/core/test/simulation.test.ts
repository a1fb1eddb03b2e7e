import { type Address, encodeErrorResult, getAddress, type Hash, type Hex, keccak256, toHex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createBundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { createSimulatedChain, type SimulatedBehaviour, type SimulatedDelivery, type SimulatedStake } from "../src/simulation/simulated-chain.ts";
import { createSimulatedClock } from "../src/simulation/simulated-clock.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import type { UserOperationV07 } from "../src/userop/types.ts";
import { maxCostOf } from "../src/userop/max-cost.ts";
import { encodeHandleOps } from "../src/userop/encode-handle-ops.ts";
import { getUserOperationHash } from "../src/userop/hash.ts";
import { estimateGas } from "../src/validation/eth-call.ts";
import { rejection, testSigner } from "./fixtures.ts";

/** A synthetic v0.7 operation of sender `n`: the simulated chain decides how it behaves. */
function syntheticOperation(n: number, nonce = 0n): UserOperationV07 {
  return {
    sender: keccak256(toHex(`sender ${n}`)).slice(0, 42) as Address,
    nonce,
    callData: "0x",
    callGasLimit: 50_000n,
    verificationGasLimit: 100_000n,
    preVerificationGas: 100_000n,
    maxFeePerGas: 20_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: `0x${"11".repeat(65)}` as Hex,
  };
}

/** The real engine on a simulated chain and clock: no anvil, no network, no real timers. */
async function simulated(
  options: {
    behaviour?: (op: UserOperationV07) => SimulatedBehaviour;
    delivery?: (tx: { hash: Hash; sentAtBlock: bigint }) => SimulatedDelivery;
    retainBlocks?: number;
    /** Milliseconds between blocks and between bundling ticks. Default 1000. */
    blockTimeMs?: number;
    stakeOf?: (entity: Address) => SimulatedStake | undefined;
    depositOf?: (account: Address) => bigint;
    /** Validate and estimate bundles through the chain's `simulator` rather than its JSON-RPC. */
    simulator?: boolean;
  } = {},
) {
  const blockTimeMs = options.blockTimeMs ?? 1_000;
  const clock = createSimulatedClock(1_750_000_000_000);
  const { stakeOf, depositOf } = options;
  const chain = createSimulatedChain({ clock, blockTimeMs, behaviour: options.behaviour as never, delivery: options.delivery, retainBlocks: options.retainBlocks, stakeOf, depositOf });
  // Every JSON-RPC method the engine calls through `request` (as `eth_call` and `eth_estimateGas` are).
  const requested: string[] = [];
  const request = (args: { method: string }) => {
    requested.push(args.method);
    return chain.client.request(args as never);
  };
  const client = { ...chain.client, request: request as typeof chain.client.request };
  const bundler = await createBundler({
    client,
    store: createMemoryMempoolStore(),
    signer: testSigner([generatePrivateKey(), generatePrivateKey()]),
    submitter: chain.submitter,
    ...(options.simulator ? { simulator: chain.simulator } : {}),
    blocks: chain.blocks,
    clock,
    entryPoints: [chain.entryPoint],
    // The simulated chain runs no EVM to trace: validation is simulation only, by explicit choice.
    settings: { validation: { mode: "unsafe" }, bundling: { intervalMs: blockTimeMs }, relaying: { minSignerBalance: 0n }, tracking: { blockPollingIntervalMs: blockTimeMs } },
  });
  const changes: StatusChange[] = [];
  bundler.onStatusChange((c) => changes.push(c));
  const send = (op: UserOperationV07) => bundler.sendUserOperation(op, chain.entryPoint.address);
  return { clock, chain, bundler, changes, send, requested, statuses: (hash: Hash) => changes.filter((c) => c.userOpHash === hash).map((c) => c.status) };
}

/** A simulated chain without an engine, two synthetic operations, and their bundle signed at any relayer nonce. */
function bundleOfTwo() {
  const clock = createSimulatedClock(1_750_000_000_000);
  const chain = createSimulatedChain({ clock });
  const ops = [syntheticOperation(1), syntheticOperation(2)];
  const lease = testSigner([generatePrivateKey()]).lease()!;
  const data = encodeHandleOps(chain.entryPoint, ops, lease.address);
  const signed = (nonce: number) =>
    lease.signTransaction({ type: "eip1559", chainId: chain.chainId, to: chain.entryPoint.address, data, nonce, gas: 2_000_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
  return { clock, chain, ops, signed };
}

describe("the engine on a simulated chain and clock", () => {
  it("admits, bundles and includes operations, block by block, and serves their receipts", async () => {
    const { clock, chain, bundler, send, statuses } = await simulated();
    const hashes = await Promise.all([1, 2, 3].map((n) => send(syntheticOperation(n))));
    bundler.start();
    await clock.advanceBy(5_000);
    for (const hash of hashes) {
      expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
      const receipt = await bundler.getUserOperationReceipt(hash);
      expect(receipt?.success).toBe(true);
    }
    expect(chain.head().number).toBe(5n);
    await bundler.stop();
  });

  it("names each operation in its events by the hash the submitter gave with the bundle, or by its own when given none or not one per operation", async () => {
    const { clock, chain, ops, signed } = bundleOfTwo();
    const bundle = { entryPoint: chain.entryPoint.address, senders: ops.map((op) => op.sender) };
    const told = [keccak256(toHex("first")), keccak256(toHex("second"))];
    const transactions = [
      await chain.submitter.submit(await signed(0), { ...bundle, userOpHashes: told }),
      await chain.submitter.submit(await signed(1), { ...bundle, userOpHashes: told.slice(1) }),
      await chain.submitter.submit(await signed(2)),
    ];
    await clock.advanceBy(1_000);
    const own = ops.map((op) => getUserOperationHash(op, chain.entryPoint, chain.chainId));
    expect(transactions.map((hash) => chain.receipt(hash)?.logs.map((log) => log.userOpHash))).toEqual([told, own, own]);
  });

  it("reads a transaction from the bytes it is sent, taking its hash and sender from them whatever the transaction says", async () => {
    const { clock, chain, ops, signed } = bundleOfTwo();
    const serialized = await signed(0);
    const hex = typeof serialized === "string" ? serialized : serialized.serialized;
    const bytes = Buffer.from(hex.slice(2), "hex");
    const hash = await chain.submitter.submit({ bytes, hash: keccak256(toHex("not its hash")), serialized: "0x" });
    expect(hash).toBe(keccak256(hex));
    const transaction = (await chain.client.request({ method: "eth_getTransactionByHash", params: [hash] })) as { input: Hex; from: Address } | null;
    expect(transaction?.input).toBe(encodeHandleOps(chain.entryPoint, ops, transaction!.from));
    await clock.advanceBy(1_000);
    expect(chain.receipt(hash)?.logs.map((log) => log.userOpHash)).toEqual(ops.map((op) => getUserOperationHash(op, chain.entryPoint, chain.chainId)));
  });

  it("serves a receipt alike at every read while it deepens, and from its new block after a reorg", async () => {
    const { clock, chain, ops, signed } = bundleOfTwo();
    const receiptOf = (hash: Hash) => chain.client.request({ method: "eth_getTransactionReceipt", params: [hash] }) as Promise<{ blockHash: Hash; blockNumber: Hex; logs: { topics: Hash[]; blockHash: Hash; data: Hex }[] } | null>;
    const hash = await chain.submitter.submit(await signed(0));
    await clock.advanceBy(1_000);
    const first = structuredClone(await receiptOf(hash));
    expect(first?.logs.map((log) => log.topics[1])).toEqual(ops.map((op) => getUserOperationHash(op, chain.entryPoint, chain.chainId)));
    const readsAlike = async (expected: unknown) => {
      for (const blocks of [1, 4, 20]) {
        await clock.advanceBy(blocks * 1_000);
        const again = await receiptOf(hash);
        expect(again).toEqual(expected);
      }
    };
    // Its block taken off the chain as soon as it was read: the transaction is mined again in another.
    chain.reorg(1);
    await clock.advanceBy(1_000);
    const remined = structuredClone(await receiptOf(hash));
    expect(remined?.blockHash).not.toBe(first!.blockHash);
    expect(remined?.logs.every((log) => log.blockHash === remined.blockHash)).toBe(true);
    await readsAlike(remined);
  });

  it("estimates a bundle from the operations its simulator is told as eth_estimateGas of their calldata does, without asking the chain", async () => {
    const { chain } = bundleOfTwo();
    const ops = [1, 2, 3].map((n) => syntheticOperation(n));
    const from = chain.entryPoint.address;
    const failing = createSimulatedChain({ clock: createSimulatedClock(0), behaviour: (op) => ({ validationFailure: op.sender.toLowerCase() === ops[2]!.sender ? "AA23 reverted" : undefined }) });
    for (const target of [chain, failing]) {
      const told = await target.simulator.estimateHandleOps!(target.entryPoint, ops, from);
      const called = await estimateGas(target.client, { from, to: target.entryPoint.address, data: encodeHandleOps(target.entryPoint, ops, from) });
      expect(told.reverted ? { reverted: true, data: told.data } : told).toEqual(called.reverted ? { reverted: true, data: called.data } : called);
    }
    expect((await failing.simulator.estimateHandleOps!(failing.entryPoint, ops, from)).reverted).toBe(true);
  });

  it("names the failing operation's own index and reason in each FailedOp it estimates, as often as it is asked", async () => {
    const ops = [1, 2, 3].map((n) => syntheticOperation(n));
    const from = ops[0]!.sender;
    const reasons = new Map([[ops[1]!.sender, "AA23 reverted"], [ops[2]!.sender, "AA21 didn't pay prefund"]]);
    const chain = createSimulatedChain({ clock: createSimulatedClock(0), behaviour: (op) => ({ validationFailure: reasons.get(op.sender.toLowerCase() as Address) }) });
    const failedOp = (index: bigint, reason: string) => encodeErrorResult({ abi: chain.entryPoint.abi, errorName: "FailedOp", args: [index, reason] });
    for (let round = 0; round < 2; round++) {
      for (const [bundle, expected] of [
        [[ops[0]!, ops[1]!], failedOp(1n, "AA23 reverted")],
        [[ops[1]!, ops[0]!], failedOp(0n, "AA23 reverted")],
        [[ops[0]!, ops[2]!], failedOp(1n, "AA21 didn't pay prefund")],
      ] as const) {
        const estimate = await chain.simulator.estimateHandleOps!(chain.entryPoint, bundle, from);
        expect(estimate.reverted ? estimate.data : estimate).toBe(expected);
      }
    }
  });

  it("builds the same bundles whether its simulator estimates them from their operations or the chain from their calldata", async () => {
    const outcomes = [];
    for (const simulator of [true, false]) {
      let atBundling = false;
      const ops = [1, 2, 3, 4].map((n) => syntheticOperation(n));
      const { clock, chain, bundler, send, statuses, requested } = await simulated({
        simulator,
        // The second operation fails validation once it is bundled: the estimate names it, and the bundle goes without it.
        behaviour: (op) => ({ validationFailure: atBundling && op.sender.toLowerCase() === ops[1]!.sender ? "AA23 reverted" : undefined }),
      });
      const hashes: Hash[] = [];
      for (const op of ops) hashes.push(await send(op));
      atBundling = true;
      bundler.start();
      await clock.advanceBy(3_000);
      await bundler.stop();
      const included = chain.history().flatMap((block) => block.transactions.map((hash) => chain.receipt(hash)!));
      outcomes.push({ statuses: hashes.map(statuses), included: included.map((receipt) => ({ gasUsed: receipt.gasUsed, logs: receipt.logs })) });
      expect(requested.includes("eth_estimateGas")).toBe(!simulator);
    }
    expect(outcomes[0]!.statuses[1]).toEqual(["pending", "dropped"]);
    expect(outcomes[0]!.included.flatMap((receipt) => receipt.logs)).toHaveLength(3);
    expect(outcomes[0]).toEqual(outcomes[1]);
  });

  it("refuses an operation whose validation fails, with the EntryPoint's reason, and reports a reverted execution", async () => {
    const failing = syntheticOperation(1);
    const reverting = syntheticOperation(2);
    const { clock, bundler, send } = await simulated({
      behaviour: (op) => ({
        validationFailure: op.sender.toLowerCase() === failing.sender ? "AA23 reverted" : undefined,
        executes: op.sender.toLowerCase() !== reverting.sender,
      }),
    });
    const error = await rejection(send(failing));
    expect(error.code).toBe(RpcErrorCode.entryPointRejected);
    expect(error.message).toContain("AA23 reverted");
    const hash = await send(reverting);
    bundler.start();
    await clock.advanceBy(3_000);
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(false);
    await bundler.stop();
  });

  it("reports the entities' stakes and the paymaster's deposit: an unstaked paymaster is held to UREP-020 (-32504), a staked one is not, a deposit too small for its pooled operations is refused (-32508)", async () => {
    const paymaster = (name: string) => keccak256(toHex(name)).slice(0, 42) as Address;
    const [unstaked, staked, poor] = [paymaster("unstaked paymaster"), paymaster("staked paymaster"), paymaster("poor paymaster")];
    const sponsored = (n: number, by: Address): UserOperationV07 => ({
      ...syntheticOperation(n),
      paymaster: by,
      paymasterVerificationGasLimit: 50_000n,
      paymasterPostOpGasLimit: 10_000n,
      paymasterData: "0x",
    });
    const oneOperation = maxCostOf(sponsored(0, poor));
    const { send } = await simulated({
      stakeOf: (entity) => (entity.toLowerCase() === staked ? { stake: 10n ** 18n, unstakeDelaySec: 86_400n } : undefined),
      depositOf: (account) => (account.toLowerCase() === poor ? (oneOperation * 3n) / 2n : 10n ** 24n),
    });
    // SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT: ten operations of a new unstaked paymaster, not eleven.
    for (let n = 1; n <= 10; n++) await send(sponsored(n, unstaked));
    const limited = await rejection(send(sponsored(11, unstaked)));
    expect(limited.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(limited.message).toContain("UREP-020");
    for (let n = 1; n <= 11; n++) await send(sponsored(100 + n, staked));

    await send(sponsored(200, poor));
    const unfunded = await rejection(send(sponsored(201, poor)));
    expect(unfunded.code).toBe(RpcErrorCode.paymasterDepositTooLow);
    expect(unfunded.message).toContain(`deposit of ${(oneOperation * 3n) / 2n} wei`);
  });

  it("replaces a bundle the chain never saw, and follows an inclusion a reorg moved to another block", async () => {
    let sent = 0;
    const { clock, chain, bundler, send, statuses, changes } = await simulated({ delivery: () => (sent++ === 0 ? { drop: true } : {}) });
    const hash = await send(syntheticOperation(1));
    bundler.start();
    await clock.advanceBy(8_000);
    expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
    const [submitted, included] = changes.filter((c) => c.status !== "pending");
    expect(included!.transactionHash).not.toBe(submitted!.transactionHash); // the replacement landed

    const before = await bundler.getUserOperationReceipt(hash);
    chain.reorg(Number(chain.head().number - before!.receipt.blockNumber) + 1);
    await clock.advanceBy(2_000);
    const after = await bundler.getUserOperationReceipt(hash);
    expect(after?.receipt.transactionHash).toBe(included!.transactionHash);
    expect(after?.receipt.blockHash).not.toBe(before!.receipt.blockHash);
    expect((await bundler.getUserOperationByHash(hash))?.blockHash).toBe(after!.receipt.blockHash);
    expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
    await bundler.stop();
  });

  it("keeps only the last retainBlocks blocks' transactions and receipts, as a pruned node does", async () => {
    const { clock, chain, bundler, send, changes } = await simulated({ retainBlocks: 3 });
    const hash = await send(syntheticOperation(1));
    bundler.start();
    await clock.advanceBy(3_000);
    const included = changes.find((c) => c.userOpHash === hash && c.status === "included")!;
    const block = chain.head().number - 1n;
    expect(chain.transactionsOf(block)).toEqual([included.transactionHash]);
    expect(chain.receipt(included.transactionHash!)?.logs[0]?.userOpHash).toBe(hash);

    await clock.advanceBy(3_000);
    expect(chain.transactionsOf(block)).toEqual([]);
    expect(chain.receipt(included.transactionHash!)).toBeUndefined();
    expect(() => createSimulatedChain({ clock, retainBlocks: 0 })).toThrow(/retainBlocks must be a positive whole number/);
    await bundler.stop();
  });

  it("bans a paymaster whose counters were set with its address in lower case, and dumps it checksummed", async () => {
    const { chain, bundler, send } = await simulated();
    const paymaster = keccak256(toHex("a banned paymaster")).slice(0, 42) as Address;
    await bundler.setReputation(chain.entryPoint.address, [{ address: paymaster, opsSeen: 1000, opsIncluded: 0 }]);
    expect(await bundler.dumpReputation(chain.entryPoint.address)).toEqual([
      { address: getAddress(paymaster), opsSeen: 1000, opsIncluded: 0, status: "banned" },
    ]);
    const sponsored = { ...syntheticOperation(1), paymaster, paymasterVerificationGasLimit: 50_000n, paymasterPostOpGasLimit: 10_000n, paymasterData: "0x" as Hex };
    const banned = await rejection(send(sponsored));
    expect(banned.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(banned.message).toBe(`paymaster ${getAddress(paymaster)} is banned`);
  });

  it("decays reputation hour by hour on the engine's clock, so a throttled entity recovers", async () => {
    const { clock, chain, bundler } = await simulated({ blockTimeMs: 60_000 });
    const paymaster = keccak256(toHex("a paymaster")).slice(0, 42) as Address;
    const standing = async () => (await bundler.dumpReputation(chain.entryPoint.address))[0]!;
    // maxSeen = 240 / 10 = 24: above 0 + throttlingSlack (10), not above 0 + banSlack (50).
    await bundler.setReputation(chain.entryPoint.address, [{ address: paymaster, opsSeen: 240, opsIncluded: 0 }]);
    expect(await standing()).toMatchObject({ opsSeen: 240, status: "throttled" });
    bundler.start();

    await clock.advanceBy(10 * 3_600_000);
    const after10Hours = await standing();
    // Each full hour takes opsSeen to floor(opsSeen × 23 / 24): 240 → 230 → 220 → … after 9 or 10 hours.
    expect(after10Hours.opsSeen).toBeLessThan(240);
    expect(after10Hours.opsSeen).toBeGreaterThan(150);
    expect(after10Hours.status).toBe("throttled");

    await clock.advanceBy(10 * 3_600_000);
    expect(await standing()).toMatchObject({ status: "ok" });
    expect((await standing()).opsSeen).toBeLessThan(110);
    await bundler.stop();
  });
});
