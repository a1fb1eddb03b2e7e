import { mempoolPolicies } from "@bundlekit/core";
import { parseEther, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFixture } from "../../../packages/core/test/fixtures.ts";
import { captureWorkload } from "../src/capture.ts";
import { replay } from "../src/replay.ts";
import type { Workload } from "../src/workload.ts";

/** `pnpm research capture`'s capture on the devnet: operations bundled there become a workload to replay. */
describe("capturing a workload from a chain", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  it("turns a block range's handleOps transactions (v0.7, v0.8 and v0.9) into a workload, reverts marked, and replays it", async () => {
    const { bundler } = await fx.makeBundler();
    const from = (await fx.client.getBlockNumber()) + 1n;
    const accounts = await Promise.all([fx.makeAccount("0.7"), fx.makeAccount("0.8"), fx.makeAccount("0.9"), fx.makeAccount("0.7")]);
    // An account that exists whatever the bundle's order, so a transfer's gas does not depend on it.
    const recipient = privateKeyToAccount(fx.devnet.accountKeys[5]!).address;
    for (const [i, account] of accounts.entries()) {
      // The last sends more than it holds (gas estimated for a call that succeeds): included, its execution reverted.
      const overspend = i === 3 ? { callData: await account.encodeCalls([{ to: recipient, value: parseEther("5") }]) } : {};
      const op = await fx.makeOperation(bundler, account, { to: recipient, value: 1n }, overspend);
      await bundler.sendUserOperation(op, account.entryPoint.address);
    }
    await bundler.sendBundleNow();
    const to = await fx.client.getBlockNumber();

    // As `pnpm research capture` writes it to its file and --workload reads it back.
    const workload: Workload = JSON.parse(JSON.stringify(await captureWorkload({ client: fx.client as PublicClient, fromBlock: from, toBlock: to })));
    expect(workload.senders).toBe(4);
    expect(workload.operations).toHaveLength(4);
    expect(workload.operations.filter((op) => op.reverts)).toHaveLength(1);
    expect(workload.operations.every((op) => op.nonce === 0 && BigInt(op.maxFeePerGas) > 0n)).toBe(true);

    const report = await replay(workload, mempoolPolicies.default());
    expect(report).toMatchObject({ offered: 4, admitted: 4, included: 4, reverted: 1 });
  });
});
