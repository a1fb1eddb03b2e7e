import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * Racing `eth_sendUserOperation`s over HTTP against the stand-alone service and its SQLite file
 * (issue 21, findings 3 and 10): one of one sender's operations per nonce gets in, and an
 * operation cleared from the pool can be sent again.
 */
describe("the stand-alone service under racing sends", () => {
  let fx: ServiceFixture;
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "bundlekit-races-"));
    fx = await serviceFixture({ database: join(directory, "mempool.sqlite"), debugMethods: true });
  });
  afterAll(async () => {
    await fx?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it("of four concurrent operations with one sender, nonce and fees, accepts one and refuses the others as underpriced replacements (-32602)", async () => {
    const account = await fx.makeAccount("0.7");
    const fees = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 2_000_000_000n, nonce: 0n };
    const ops = await Promise.all([1n, 2n, 3n, 4n].map((value) => fx.signedOperation(account, { to: account.address, value }, fees)));
    const answers = await Promise.all(ops.map((op) => fx.call("eth_sendUserOperation", [op, fx.entryPoint("0.7")])));
    const accepted = answers.filter((a) => "result" in a);
    expect(accepted).toHaveLength(1);
    for (const answer of answers.filter((a) => "error" in a)) {
      expect(answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^replacement underpriced/) });
    }
    const pooled = await fx.call("debug_bundler_dumpMempool", [fx.entryPoint("0.7")]);
    expect(pooled.result).toHaveLength(1);
    expect(await fx.call("debug_bundler_sendBundleNow")).toMatchObject({ result: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const receipt = await fx.call("eth_getUserOperationReceipt", [accepted[0].result]);
    expect(receipt.result.success).toBe(true);
  });

  it("accepts again an operation cleared from the pool, and includes it", async () => {
    const account = await fx.makeAccount("0.8");
    const op = await fx.signedOperation(account);
    const { result: hash } = await fx.call("eth_sendUserOperation", [op, fx.entryPoint("0.8")]);
    expect(await fx.call("debug_bundler_clearMempool")).toMatchObject({ result: "ok" });
    expect(await fx.call("eth_sendUserOperation", [op, fx.entryPoint("0.8")])).toMatchObject({ result: hash });
    await fx.call("debug_bundler_sendBundleNow");
    expect((await fx.call("eth_getUserOperationReceipt", [hash])).result.success).toBe(true);
  });
});
