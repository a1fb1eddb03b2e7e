import { type Hash, http } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * The two per-sender settings operators of other bundlers set, through the stand-alone service
 * with viem's bundler client (which takes a fresh nonce key for each operation): an unstaked
 * sender may hold `BUNDLEKIT_SAME_SENDER_MEMPOOL_COUNT` operations in the pool, and with
 * `BUNDLEKIT_UNIQUE_SENDERS_PER_BUNDLE=false` its operations share a bundle.
 */
describe("per-sender settings through the service", () => {
  let fx: ServiceFixture;
  beforeAll(async () => {
    const { bundler } = loadConfig({ BUNDLEKIT_SAME_SENDER_MEMPOOL_COUNT: "2", BUNDLEKIT_UNIQUE_SENDERS_PER_BUNDLE: "false" });
    fx = await serviceFixture({ bundler, debugMethods: true });
  });
  afterAll(() => fx?.close());

  it("admits two operations of one sender, refuses a third with -32504, and bundles the two together", async () => {
    const account = await fx.makeAccount("0.7");
    const bundler = createBundlerClient({ account, client: fx.client, transport: http(fx.service.url), pollingInterval: 50 });
    const call = { to: account.address, value: 0n };
    await bundler.sendUserOperation({ calls: [call] });
    expect((await fx.call("debug_bundler_sendBundleNow")).result).toBeDefined(); // deploys the account

    const sent: Hash[] = [];
    for (const _ of [1, 2]) sent.push(await bundler.sendUserOperation({ calls: [call], nonce: await account.getNonce() }));
    const third = await bundler.sendUserOperation({ calls: [call], nonce: await account.getNonce() }).then(
      () => undefined,
      (error: { walk: (fn: (e: unknown) => boolean) => unknown; details?: string }) => ({
        code: (error.walk((e) => typeof (e as { code?: unknown }).code === "number") as { code: number }).code,
        details: error.details,
      }),
    );
    expect(third).toMatchObject({ code: -32504, details: expect.stringMatching(/already has 2 operations in the mempool/) });

    expect((await fx.call("debug_bundler_sendBundleNow")).result).toBeDefined();
    const receipts = await Promise.all(sent.map((hash) => bundler.waitForUserOperationReceipt({ hash })));
    expect(receipts.map((receipt) => receipt.success)).toEqual([true, true]);
    expect(receipts[0]!.receipt.transactionHash).toBe(receipts[1]!.receipt.transactionHash);
  });
});
