import { ruleProbeAbis } from "@bundlekit/devnet";
import { concat, createWalletClient, getAddress, http, parseEther, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusChange } from "../src/status/status-change.ts";
import { type engineFixture, eip7702Operation } from "./fixtures.ts";
import { ruleCases, ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562 in safe mode, the default, on a real anvil: purpose-built entities run one rule each
 * during validation, each case on an engine of its own (fresh pool and reputation).
 */

let fixture: Awaited<ReturnType<typeof engineFixture>>;
let close: () => Promise<void>;
let deployer: Awaited<ReturnType<typeof ruleProbesFixture>>["deployer"];
let ruleOp: Awaited<ReturnType<typeof ruleProbesFixture>>["ruleOp"];
let expectRuleOutcome: Awaited<ReturnType<typeof ruleProbesFixture>>["expectRuleOutcome"];

beforeAll(async () => {
  ({ fixture, deployer, ruleOp, expectRuleOutcome, close } = await ruleProbesFixture());
}, 60_000);
afterAll(async () => {
  await close?.();
  await fixture?.devnet.stop();
});

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("safe mode on EntryPoint v%s", (version) => {
  for (const ruleCase of ruleCases) it(ruleCase.name, () => expectRuleOutcome(version, ruleCase));
});

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("before bundling on EntryPoint v%s", (version) => {
  it("drops an operation whose account's code changed since validation (COD-010), with the reason in its record and status event", async () => {
    const { bundler: fresh, store } = await fixture.makeBundler({ settings: { reputation: { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 } } });
    try {
      const changes: StatusChange[] = [];
      fresh.onStatusChange((c) => changes.push(c));
      const { op, set, sender } = await ruleOp(version, { accountRule: "OK" });
      const hash = await fresh.sendUserOperation(op, set.entryPoint);
      const code = await fixture.client.getCode({ address: sender });
      await fixture.client.request({ method: "anvil_setCode", params: [sender, `${code}00`] } as never);
      expect(await fresh.sendBundleNow()).toEqual([]);
      const reason = expect.stringMatching(new RegExp(`^COD-010: the code of ${sender.toLowerCase()} changed`));
      expect(changes.at(-1)).toEqual({ userOpHash: hash, status: "dropped", reason });
      expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: reason });
    } finally {
      await fresh.stop();
    }
  });

  it("bans a paymaster that fails the bundle after passing its second validation (GREP-040)", async () => {
    const { bundler: fresh, store } = await fixture.makeBundler({ settings: { reputation: { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 } } });
    const { op, set } = await ruleOp(version, { paymasterRule: "REVERT_IF_SHARED", staked: true });
    const hash = await fresh.sendUserOperation(op, set.entryPoint);
    const setShared = (value: bigint) =>
      deployer.writeContract({ address: set.target, abi: ruleProbeAbis.RuleTarget, functionName: "setShared", args: [value] }).then((h) => fixture.client.waitForTransactionReceipt({ hash: h }));
    await setShared(1n);
    try {
      expect(await fresh.sendBundleNow()).toEqual([]);
      expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: expect.stringMatching(/^AA33 /) });
      expect(await fresh.dumpReputation(set.entryPoint)).toContainEqual({ address: getAddress(set.paymaster), opsSeen: 10_000, opsIncluded: 0, status: "banned" });
    } finally {
      await setShared(0n);
      await fresh.stop();
    }
  });

  it("leaves in the pool an operation that reads storage of another bundled operation's sender (STO-041), and bundles it once that one has landed", async () => {
    const { bundler: fresh, store } = await fixture.makeBundler({ settings: { reputation: { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 } } });
    try {
      const first = await ruleOp(version, { accountRule: "OK" });
      const reader = await ruleOp(version, { accountRule: `READ:${first.sender.slice(2)}` });
      reader.op.signature = concat([toHex("READ:"), first.sender]);
      const firstHash = await fresh.sendUserOperation(first.op, first.set.entryPoint);
      const readerHash = await fresh.sendUserOperation(reader.op, reader.set.entryPoint);
      const sent = await fresh.sendBundleNow();
      const firstReceipt = await fresh.getUserOperationReceipt(firstHash);
      expect(firstReceipt).toMatchObject({ success: true });
      // The run goes on while operations remain: the reader goes in a later bundle of this run
      // when the first has landed by then, or waits in the pool for the next run.
      if (sent.length === 1) {
        expect(await store.get(readerHash)).toMatchObject({ status: "pending" });
        await fresh.sendBundleNow();
      }
      const readerReceipt = await fresh.getUserOperationReceipt(readerHash);
      expect(readerReceipt).toMatchObject({ success: true });
      expect(readerReceipt!.receipt.transactionHash).not.toBe(firstReceipt!.receipt.transactionHash);
    } finally {
      await fresh.stop();
    }
  });
});

describe("well-behaved accounts in safe mode", () => {
  it("v0.8: an EIP-7702 account (an EOA delegating to Simple7702Account) is accepted and included", async () => {
    const { bundler: fresh } = await fixture.makeBundler();
    try {
      const eoa = privateKeyToAccount(generatePrivateKey());
      const funder = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-3)!) });
      await fixture.client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: eoa.address, value: parseEther("1") }) });
      const deployment = fixture.devnet.deployments["0.8"];
      const op = await eip7702Operation(eoa, { nonce: 0n, delegate: deployment.simple7702Account!, entryPoint: deployment.entryPoint, chainId: fixture.devnet.chainId });
      const hash = await fresh.sendUserOperation(op, deployment.entryPoint);
      await fresh.sendBundleNow();
      expect(await fresh.getUserOperationReceipt(hash)).toMatchObject({ success: true });
    } finally {
      await fresh.stop();
    }
  });
});
