import type { EntryPointVersion } from "@bundlekit/devnet";
import type { Address, Hash, TransactionReceipt } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bundleGasOf } from "../src/bundle/bundle-gas.ts";
import { type BundlerSettingsInput, mergeBundlerSettings } from "../src/engine/settings.ts";
import type { Bundler } from "../src/engine/create-bundler.ts";
import {
  decodeUserOperationEvent,
  userOperationEventTopic,
} from "../src/receipt/user-operation-event.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { maxOf } from "../src/utils/bigint-math.ts";
import { engineFixture } from "./fixtures.ts";

/**
 * What bundles cost and pay, read from the chain: the fees a bundle bids against what its
 * operations repay, who receives the fees, and how many operations a bundle holds.
 */
describe("bundle economics", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  const engines: Bundler[] = [];
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.stop();
  });
  afterAll(() => fx?.devnet.stop());

  const recipient = (): Address => privateKeyToAccount(generatePrivateKey()).address;

  /** An engine validating on the main thread: starting tracer workers costs more than its few validations. */
  async function engine(settings: BundlerSettingsInput = {}) {
    const made = await fx.makeBundler({ settings: mergeBundlerSettings({ validation: { tracerWorkers: 0 } }, settings) });
    engines.push(made.bundler);
    return made;
  }

  /** Operations of `count` fresh accounts, admitted; `fees` may override each one's. */
  async function admitted(
    bundler: Bundler,
    count: number,
    version: EntryPointVersion = "0.7",
    fees: (i: number) => Partial<UserOperation> = () => ({}),
  ) {
    const admitted: { hash: Hash; op: UserOperation }[] = [];
    for (let i = 0; i < count; i++) {
      const account = await fx.makeAccount(version);
      const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }, fees(i));
      admitted.push({ hash: await bundler.sendUserOperation(op, account.entryPoint.address), op });
    }
    return admitted;
  }

  /** The UserOperationEvents of a mined bundle, decoded. */
  const eventsOf = (receipt: TransactionReceipt) =>
    receipt.logs
      .filter((log) => log.topics[0] === userOperationEventTopic)
      .map((log) => decodeUserOperationEvent(log as never));

  /** `address`'s balance change across the block that mined `receipt`. */
  async function balanceChange(address: Address, receipt: TransactionReceipt) {
    const [before, after] = await Promise.all([
      fx.client.getBalance({ address, blockNumber: receipt.blockNumber - 1n }),
      fx.client.getBalance({ address, blockNumber: receipt.blockNumber }),
    ]);
    return after - before;
  }

  it("bids no more per gas than its operations repay, when the fee oracle suggests three times more", async () => {
    const { bundler } = await engine({ gas: { gasPriceMarkupPercent: 200 } });
    const suggested = await bundler.getGasPrice();
    const [cheap, cheapTip] = [suggested.maxFeePerGas / 3n, suggested.maxPriorityFeePerGas / 3n];
    // The first operation caps the fee, the second the tip.
    const ops = await admitted(bundler, 2, "0.7", (i) =>
      i === 0
        ? { maxFeePerGas: cheap, maxPriorityFeePerGas: cheapTip + 7n }
        : { maxFeePerGas: cheap + 5n, maxPriorityFeePerGas: cheapTip },
    );
    const [transactionHash] = await bundler.sendBundleNow();
    const transaction = await fx.client.getTransaction({ hash: transactionHash! });
    expect({
      maxFeePerGas: transaction.maxFeePerGas,
      maxPriorityFeePerGas: transaction.maxPriorityFeePerGas,
    }).toEqual({
      maxFeePerGas: cheap,
      maxPriorityFeePerGas: cheapTip,
    });
    const receipt = await fx.client.getTransactionReceipt({ hash: transactionHash! });
    const events = eventsOf(receipt);
    expect(events.map((e) => e.userOpHash)).toEqual(ops.map((o) => o.hash));
    // Each operation pays its own price per gas; the relayer paid no more per gas than any of them.
    for (const event of events)
      expect(receipt.effectiveGasPrice).toBeLessThanOrEqual(
        event.actualGasCost / event.actualGasUsed,
      );
  });

  it("pays the fees to the configured beneficiary; the relayer pays only the transaction", async () => {
    const beneficiary = recipient();
    const { bundler } = await engine({ bundling: { beneficiary } });
    await admitted(bundler, 2);
    const [transactionHash] = await bundler.sendBundleNow();
    const receipt = await fx.client.getTransactionReceipt({ hash: transactionHash! });
    const paid = eventsOf(receipt).reduce((sum, e) => sum + e.actualGasCost, 0n);
    expect(paid).toBeGreaterThan(0n);
    expect(await balanceChange(beneficiary, receipt)).toBe(paid);
    expect(await balanceChange(receipt.from, receipt)).toBe(
      -receipt.gasUsed * receipt.effectiveGasPrice,
    );
  });

  it.each<EntryPointVersion>(["0.6", "0.7", "0.8", "0.9"])(
    "v%s: without a beneficiary the relayer is paid the fees, and a bundle of one operation leaves it richer than before",
    async (version) => {
      const { bundler } = await engine();
      await admitted(bundler, 1, version);
      const [transactionHash] = await bundler.sendBundleNow();
      const receipt = await fx.client.getTransactionReceipt({ hash: transactionHash! });
      const [event] = eventsOf(receipt);
      const change = await balanceChange(receipt.from, receipt);
      expect(change).toBe(event!.actualGasCost - receipt.gasUsed * receipt.effectiveGasPrice);
      expect(change).toBeGreaterThan(0n);
    },
  );

  it("holds at most bundleSize operations per bundle: five pending go out as 2, 2 and 1, each included once", async () => {
    const { bundler } = await engine({ bundling: { maxOperations: 2 } });
    const ops = await admitted(bundler, 5);
    const bundles = await bundler.sendBundleNow();
    const carried = await Promise.all(
      bundles.map(async (hash) =>
        eventsOf(await fx.client.getTransactionReceipt({ hash })).map((e) => e.userOpHash),
      ),
    );
    expect(carried.map((hashes) => hashes.length)).toEqual([2, 2, 1]);
    expect(carried.flat().sort()).toEqual(ops.map((o) => o.hash).sort());
  });

  describe("a bundle pulled by a sequencer", () => {
    const sequencer = () => privateKeyToAccount(fx.devnet.accountKeys[12]!).address;

    /** What a block builder knows about the next block. */
    async function nextBlock() {
      const latest = await fx.client.getBlock();
      return {
        gasBudget: 10_000_000n,
        baseFee: latest.baseFeePerGas!,
        blockNumber: latest.number + 1n,
        timestamp: latest.timestamp + 1n,
        from: sequencer(),
      };
    }

    it("holds at most bundleSize operations", async () => {
      const { bundler } = await engine({ bundling: { mode: "pull", maxOperations: 2 } });
      const ops = await admitted(bundler, 3);
      const proposal = await bundler.proposeBundle(await nextBlock());
      expect(proposal?.userOpHashes).toHaveLength(2);
      expect(ops.map((o) => o.hash)).toEqual(expect.arrayContaining(proposal!.userOpHashes));
    });

    it("holds at most maxBundleGas of operation gas", async () => {
      const { bundler: admitting, store } = await engine();
      const ops = await admitted(admitting, 3);
      const [first, ...rest] = ops.map((o) => bundleGasOf(o.op));
      const largest = maxOf(first!, ...rest);
      const { bundler } = await fx.makeBundler({
        store,
        settings: { validation: { tracerWorkers: 0 }, bundling: { mode: "pull", maxGas: largest * 2n + largest / 2n } },
      });
      engines.push(bundler);
      const proposal = await bundler.proposeBundle(await nextBlock());
      expect(proposal?.userOpHashes).toHaveLength(2);
    });

    it("bids what its operations repay, not the suggestion", async () => {
      const { bundler } = await engine({ gas: { gasPriceMarkupPercent: 200 }, bundling: { mode: "pull" } });
      const suggested = await bundler.getGasPrice();
      const fees = {
        maxFeePerGas: suggested.maxFeePerGas / 3n,
        maxPriorityFeePerGas: suggested.maxPriorityFeePerGas / 3n,
      };
      await admitted(bundler, 1, "0.7", () => fees);
      expect((await bundler.proposeBundle(await nextBlock()))?.fees).toEqual(fees);
    });
  });
});
