import type { EntryPointVersion } from "@bundlekit/devnet";
import { type Address, getAddress, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * Issue 21, finding 2, as a wallet on viem's bundler client does it against the stand-alone
 * service: a new account sends nonce 0 with its factory, then nonce 1 built while the account is
 * not on chain yet, so with the factory again. The service refuses that one with the EntryPoint's
 * AA10; without the factory both land, and the factory every new account needs stays ok.
 */
describe("a new account's second operation through viem's bundler client", () => {
  let fx: ServiceFixture;
  beforeAll(async () => {
    fx = await serviceFixture({ debugMethods: true });
  });
  afterAll(() => fx?.close());

  /** The error viem threw: the JSON-RPC code and message the service answered. */
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (e: { details?: string; walk: (fn: (e: unknown) => boolean) => unknown }) => ({
        code: (e.walk((x) => typeof (x as { code?: unknown }).code === "number") as { code?: number } | null)?.code,
        details: e.details,
      }),
    );

  // v0.9 ignores the factory data of a sender that exists: packages/core/test/queued-deployment.test.ts shows both landing.
  it.each<EntryPointVersion>(["0.6", "0.7", "0.8"])("v%s: refused with AA10 (-32500) at estimation and at send; without the factory both land and the factory stays ok", async (version) => {
    const account = await fx.makeAccount(version);
    const entryPoint = fx.entryPoint(version);
    const factory = getAddress((await account.getFactoryArgs()).factory as Address);
    const bundler = createBundlerClient({ account, client: fx.client, transport: http(fx.service.url), pollingInterval: 50 });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const nonce = await account.getNonce(); // viem's: a fresh nonce key, sequence 0
    const first = await bundler.sendUserOperation({ calls: [{ to, value: 1n }], nonce });

    // viem adds the factory while the account has no code: the estimate of the next nonce is refused...
    const calls = [{ to, value: 2n }];
    const aa10 = { code: -32500, details: "AA10 sender already constructed" };
    expect(await refusal(bundler.sendUserOperation({ calls, nonce: nonce + 1n }))).toEqual(aa10);
    // ...and so is the operation sent with gas of its own (no estimate), as it would fail in its bundle,
    const gas = { callGasLimit: 100_000n, verificationGasLimit: 500_000n, preVerificationGas: 100_000n };
    expect(await refusal(bundler.sendUserOperation({ calls, nonce: nonce + 1n, ...gas }))).toEqual(aa10);
    // ...and what viem sends by default: another fresh nonce key, with the factory again.
    expect(await refusal(bundler.sendUserOperation({ calls }))).toEqual(aa10);

    // A wallet that knows its first operation deploys the account leaves the factory out: estimated and accepted.
    const queuedAccount = { ...account, getFactoryArgs: async () => ({ factory: undefined, factoryData: undefined }) };
    const queued = createBundlerClient({ account: queuedAccount, client: fx.client, transport: http(fx.service.url), pollingInterval: 50 });
    const second = await queued.sendUserOperation({ calls, nonce: nonce + 1n });
    for (let bundle = 0; bundle < 2; bundle++) expect((await fx.call("debug_bundler_sendBundleNow", [])).error).toBeUndefined();
    for (const hash of [first, second]) expect((await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 })).success).toBe(true);
    expect(await fx.client.getBalance({ address: to })).toBe(3n);
    const reputation = (await fx.call("debug_bundler_dumpReputation", [entryPoint])).result as { address: string; status: string }[];
    expect(reputation.find((e) => getAddress(e.address) === factory)).toMatchObject({ status: "0x0" });
  });
});
