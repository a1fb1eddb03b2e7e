import { type Devnet, ENTRY_POINT_VERSIONS, type EntryPointVersion, DEVNET_PAYMASTER_SIGNER_KEY, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, http, type PublicClient, parseAbi, parseEther, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";
import { createConfiguredSponsorshipPolicy } from "../src/sponsorship/configured-policy.ts";
import { sponsorWithPermissionless } from "./snippets/sponsor-with-permissionless.ts";
import { sponsorWithViem } from "./snippets/sponsor-with-viem.ts";

/** The API key of the endpoint's policy in these tests. */
const apiKey = "test-app-key-0123456789";

/**
 * The service's ERC-7677 endpoint sponsoring operations through the devnet's verifying paymasters
 * for callers with an API key, with viem's and permissionless's own clients.
 */
describe("ERC-7677 paymaster endpoint", () => {
  let devnet: Devnet;
  let service: BundlerService;
  let client: PublicClient;
  /** The endpoint's URL with the API key, as a hosted paymaster's is given out. */
  let paymasterUrl: string;

  beforeAll(async () => {
    devnet = await startDevnet();
    const config = loadConfig({ BUNDLEKIT_RPC_URL: devnet.rpcUrl, BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","), BUNDLEKIT_PORT: "0", BUNDLEKIT_DATABASE: ":memory:", BUNDLEKIT_BUNDLE_INTERVAL: "100" });
    service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl }, undefined, {
      paymaster: {
        signerKey: DEVNET_PAYMASTER_SIGNER_KEY,
        paymasters: Object.fromEntries(ENTRY_POINT_VERSIONS.map((version) => [version, devnet.deployments[version].paymasters.verifying])),
        policy: createConfiguredSponsorshipPolicy({
          validForSeconds: 90,
          keys: [{ name: "test app", apiKey, maxCostPerOperation: parseEther("0.05"), quota: { windowSeconds: 3600, operations: 100, cost: parseEther("1") } }],
        }),
      },
    });
    paymasterUrl = `${service.url}?apikey=${apiKey}`;
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
      paymaster: createPaymasterClient({ transport: http(paymasterUrl) }),
      pollingInterval: 100,
    });
    const before = await deposit(version);
    const hash = await bundler.sendUserOperation({ calls: [{ to: account.address, value: 0n }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    expect(receipt.success).toBe(true);
    expect(receipt.paymaster?.toLowerCase()).toBe(devnet.deployments[version].paymasters.verifying.toLowerCase());
    expect(await deposit(version)).toBe(before - receipt.actualGasCost);
  });

  // The snippets use permissionless's SimpleAccount, which knows no v0.9 (packages/devnet/README.md);
  // v0.9 is sponsored above with the devnet's, and in clients.test.ts.
  it.each(ENTRY_POINT_VERSIONS.filter((v) => v !== "0.9"))("docs/paymasters.md, v%s: viem's and permissionless's clients are sponsored with no other service", async (version) => {
    const options = { bundlerUrl: service.url, paymasterUrl, nodeUrl: devnet.rpcUrl, chain: devnet.chain, entryPoint: { address: devnet.deployments[version].entryPoint, version }, to: privateKeyToAccount(generatePrivateKey()).address };
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

  /** pm_getPaymasterStubData for a fresh v0.7 account, over HTTP with `headers` at `url`. */
  const stubData = async (url: string, headers: Record<string, string> = {}) => {
    const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version: "0.7" });
    const op = { sender: account.address, nonce: "0x0", callData: await account.encodeCalls([{ to: account.address, value: 0n }]) };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_getPaymasterStubData", params: [op, devnet.deployments["0.7"].entryPoint, toHex(devnet.chainId), {}] });
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    return (await response.json()) as { result?: { paymaster: string }; error?: { code: number; message: string; data?: unknown } };
  };

  it("refuses a caller without an API key, or with an unknown one, with -32001 saying where the key goes", async () => {
    expect((await stubData(service.url)).error).toEqual({
      code: -32001,
      message: "sponsorship refused: an API key is required: add ?apikey=<key> to the endpoint's URL, or send the x-api-key header",
      data: { cap: "apiKey" },
    });
    expect((await stubData(`${service.url}?apikey=${apiKey}x`)).error).toEqual({ code: -32001, message: "sponsorship refused: unknown API key", data: { cap: "apiKey" } });
    expect((await stubData(service.url, { "x-api-key": apiKey.slice(1) })).error?.message).toBe("sponsorship refused: unknown API key");
  });

  it("takes the API key in the URL or in the x-api-key header", async () => {
    const verifying = devnet.deployments["0.7"].paymasters.verifying;
    expect((await stubData(paymasterUrl)).result?.paymaster).toBe(verifying);
    expect((await stubData(service.url, { "x-api-key": apiKey })).result?.paymaster).toBe(verifying);
  });

  it("over WebSocket, takes the API key from the URL the connection was opened with", async () => {
    const ask = (url: string) =>
      new Promise<{ result?: unknown; error?: { code: number } }>((resolve, reject) => {
        const socket = new WebSocket(url);
        const params = [{ sender: devnet.deployments["0.7"].paymasters.verifying, nonce: "0x0", callData: "0x" }, devnet.deployments["0.7"].entryPoint, toHex(devnet.chainId), {}];
        socket.onopen = () => socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_getPaymasterStubData", params }));
        socket.onmessage = (event) => {
          resolve(JSON.parse(String(event.data)));
          socket.close();
        };
        socket.onerror = () => reject(new Error(`WebSocket to ${url} failed`));
      });
    expect((await ask(service.webSocketUrl)).error?.code).toBe(-32001);
    expect((await ask(`${service.webSocketUrl}?apikey=${apiKey}`)).result).toMatchObject({ paymaster: devnet.deployments["0.7"].paymasters.verifying });
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
