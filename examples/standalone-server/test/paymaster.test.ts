import { type Devnet, ENTRY_POINT_VERSIONS, type EntryPointVersion, DEVNET_PAYMASTER_SIGNER_KEY, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, http, type PublicClient, parseAbi, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";
import { sponsorWithPermissionless } from "./snippets/sponsor-with-permissionless.ts";
import { sponsorWithViem } from "./snippets/sponsor-with-viem.ts";

/** The service's ERC-7677 endpoint sponsoring operations through the devnet's verifying paymasters, with viem's own clients. */
describe("ERC-7677 paymaster endpoint", () => {
  let devnet: Devnet;
  let service: BundlerService;
  let client: PublicClient;

  beforeAll(async () => {
    devnet = await startDevnet();
    const config = loadConfig({ BUNDLEKIT_RPC_URL: devnet.rpcUrl, BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","), BUNDLEKIT_PORT: "0", BUNDLEKIT_DATABASE: ":memory:", BUNDLEKIT_BUNDLE_INTERVAL: "100" });
    service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl }, undefined, {
      paymaster: {
        signerKey: DEVNET_PAYMASTER_SIGNER_KEY,
        paymasters: Object.fromEntries(ENTRY_POINT_VERSIONS.map((version) => [version, devnet.deployments[version].paymasters.verifying])),
      },
    });
    client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 100 }) as PublicClient;
  });
  afterAll(async () => {
    await service?.close();
    await devnet?.stop();
  });

  const deposit = (version: EntryPointVersion) =>
    client.readContract({
      address: devnet.deployments[version].entryPoint,
      abi: parseAbi(["function balanceOf(address) view returns (uint256)"]),
      functionName: "balanceOf",
      args: [devnet.deployments[version].paymasters.verifying],
    });

  it.each(ENTRY_POINT_VERSIONS)("sponsors an account with no funds on EntryPoint v%s: estimated, sent, included, paid from the paymaster's deposit", async (version) => {
    const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version });
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    const bundler = createBundlerClient({
      account,
      client,
      transport: http(service.url),
      paymaster: createPaymasterClient({ transport: http(service.url) }),
      pollingInterval: 100,
    });
    const before = await deposit(version);
    const hash = await bundler.sendUserOperation({ calls: [{ to: account.address, value: 0n }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    expect(receipt.success).toBe(true);
    expect(receipt.paymaster?.toLowerCase()).toBe(devnet.deployments[version].paymasters.verifying.toLowerCase());
    expect(await deposit(version)).toBe(before - receipt.actualGasCost);
  });

  it.each(ENTRY_POINT_VERSIONS)("docs/paymasters.md, v%s: viem's and permissionless's clients are sponsored with no other service", async (version) => {
    const options = { bundlerUrl: service.url, nodeUrl: devnet.rpcUrl, chain: devnet.chain, entryPoint: { address: devnet.deployments[version].entryPoint, version }, to: privateKeyToAccount(generatePrivateKey()).address };
    const before = await deposit(version);
    const receipt = await sponsorWithViem(options);
    expect(receipt.success).toBe(true);
    expect(receipt.paymaster?.toLowerCase()).toBe(devnet.deployments[version].paymasters.verifying.toLowerCase());
    const transactionHash = await sponsorWithPermissionless(options);
    expect((await client.getTransactionReceipt({ hash: transactionHash })).status).toBe("success");
    // Both were paid from the paymaster's deposit, the first by exactly its actual cost.
    expect(await deposit(version)).toBeLessThan(before - receipt.actualGasCost);
  });

  it("docs/paymasters.md shows the code these tests run, as it is", () => {
    const doc = readFileSync(new URL("../../../docs/paymasters.md", import.meta.url), "utf8");
    for (const snippet of ["sponsor-with-viem.ts", "sponsor-with-permissionless.ts"]) {
      expect(doc).toContain(readFileSync(new URL(`./snippets/${snippet}`, import.meta.url), "utf8"));
    }
  });

  it("refuses to sign for another chain or an EntryPoint it does not serve (-32602)", async () => {
    const call = (params: unknown[]) =>
      fetch(service.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_getPaymasterData", params }) }).then(
        (r) => r.json() as Promise<{ error: { code: number; message: string } }>,
      );
    const op = { sender: privateKeyToAccount(devnet.accountKeys[0]!).address, nonce: "0x0", callData: "0x" };
    const otherChain = await call([op, devnet.deployments["0.7"].entryPoint, toHex(devnet.chainId + 1), {}]);
    expect(otherChain.error).toMatchObject({ code: -32602, message: expect.stringContaining(`sponsors only on chain ${devnet.chainId}`) });
    const unknownEntryPoint = await call([op, `0x${"12".repeat(20)}`, toHex(devnet.chainId), {}]);
    expect(unknownEntryPoint.error.code).toBe(-32602);
  });

  it("is off unless configured: a service without it answers -32601", async () => {
    const config = loadConfig({ BUNDLEKIT_RPC_URL: devnet.rpcUrl, BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","), BUNDLEKIT_PORT: "0", BUNDLEKIT_DATABASE: ":memory:" });
    const plain = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl });
    try {
      const answer = (await fetch(plain.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_getPaymasterStubData", params: [{}, devnet.deployments["0.7"].entryPoint, toHex(devnet.chainId), {}] }),
      }).then((r) => r.json())) as { error: { code: number } };
      expect(answer.error.code).toBe(-32601);
    } finally {
      await plain.close();
    }
  });
});
