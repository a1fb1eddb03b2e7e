import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Devnet, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, createWalletClient, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";

/** The stand-alone service on a SQLite file keeps accepted operations and lookups across restarts. */
describe("restarting the service", () => {
  let devnet: Devnet;
  let directory: string;
  const services: BundlerService[] = [];

  beforeAll(async () => {
    devnet = await startDevnet();
    directory = mkdtempSync(join(tmpdir(), "bundlekit-restart-"));
  });
  afterAll(async () => {
    for (const service of services) await service.close().catch(() => {});
    await devnet?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  async function start() {
    const config = loadConfig({
      BUNDLEKIT_RPC_URL: devnet.rpcUrl,
      BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
      BUNDLEKIT_PORT: "0",
      BUNDLEKIT_DATABASE: join(directory, "mempool.sqlite"),
      BUNDLEKIT_BUNDLING_MODE: "manual",
    });
    const service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl });
    services.push(service);
    return service;
  }

  // biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
  async function call(service: BundlerService, method: string, params: unknown[]): Promise<any> {
    const response = await fetch(service.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    return ((await response.json()) as { result: unknown }).result;
  }

  it("an operation accepted before a restart is bundled after it, and both lookups keep working", async () => {
    const chain = devnet.chain;
    const client = createPublicClient({ chain, transport: http(devnet.rpcUrl) });
    const account = await toSimpleAccount({ client, owner: privateKeyToAccount(devnet.accountKeys[0]!), version: "0.7" });
    const funder = createWalletClient({ chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
    await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }) });

    const first = await start();
    const bundlerClient = createBundlerClient({ account, client, transport: http(first.url) });
    const prepared = await bundlerClient.prepareUserOperation({ calls: [{ to: account.address, value: 0n }] });
    const op = formatUserOperationRequest({ ...prepared, signature: await account.signUserOperation(prepared as never) } as never);
    const userOpHash = await call(first, "eth_sendUserOperation", [op, account.entryPoint.address]);
    await first.close();

    // Accepted, then the service went down before bundling: the operation is still there, as sent.
    const second = await start();
    expect(await call(second, "eth_getUserOperationByHash", [userOpHash])).toMatchObject({ userOperation: op, transactionHash: null });
    await second.bundler.sendBundleNow();
    const receipt = await call(second, "eth_getUserOperationReceipt", [userOpHash]);
    expect(receipt.success).toBe(true);
    await second.close();

    // Included before this restart: still found, with the same inclusion.
    const third = await start();
    expect(await call(third, "eth_getUserOperationReceipt", [userOpHash])).toEqual({ ...receipt, receipt: { ...receipt.receipt, confirmations: expect.any(String) } });
    expect(await call(third, "eth_getUserOperationByHash", [userOpHash])).toMatchObject({
      userOperation: op,
      transactionHash: receipt.receipt.transactionHash,
      blockNumber: receipt.receipt.blockNumber,
    });
  });
});
