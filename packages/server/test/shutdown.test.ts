import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Devnet, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, createWalletClient, http, keccak256, parseEther, toHex } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceProcess, startServiceProcess } from "../src/service-process.ts";
import { type NodeProxy, startNodeProxy } from "./node-proxy.ts";

/**
 * SIGTERM while a request and a bundling run wait on a node that has stopped answering: the
 * process itself, so it is spawned. The node timeout (10 min) is far beyond the grace period (2 s)
 * and the test's bound (the default, 60 s, which also covers starting the service twice on a busy
 * machine): only the grace period can end the request and the process in time.
 */
describe("stand-alone service stopped while its node hangs", () => {
  let devnet: Devnet;
  let proxy: NodeProxy;
  const services: ServiceProcess[] = [];
  const database = join(mkdtempSync(join(tmpdir(), "bundlekit-")), "mempool.sqlite");
  const start = async () => {
    const started = await startServiceProcess({
      rpcUrl: proxy.url,
      relayerKeys: devnet.relayerKeys,
      database,
      env: { BUNDLEKIT_SHUTDOWN_GRACE_MS: "2000", BUNDLEKIT_NODE_TIMEOUT_MS: "600000" },
    });
    services.push(started);
    return started;
  };

  beforeAll(async () => {
    devnet = await startDevnet();
    proxy = await startNodeProxy(devnet.rpcUrl);
  });
  afterAll(async () => {
    proxy?.release();
    for (const service of services) await service.kill();
    await proxy?.close();
    await devnet?.stop();
  });

  it("answers the request in flight with an error, exits by itself within the grace period, and keeps the accepted operation", async () => {
    const service = await start();
    const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
    const funder = createWalletClient({
      chain: devnet.chain,
      transport: http(devnet.rpcUrl),
      account: privateKeyToAccount(devnet.accountKeys.at(-1)!),
    });
    const account = await toSimpleAccount({
      client,
      owner: privateKeyToAccount(devnet.accountKeys[0]!),
      version: "0.7",
    });
    await client.waitForTransactionReceipt({
      hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }),
    });

    // The bundle's gas estimate and the lookup's log query hang, so both are known to wait on the node; then the whole node does.
    proxy.hold(
      (request) => request.method === "eth_estimateGas" || request.method === "eth_getLogs",
    );
    const bundlerClient = createBundlerClient({ account, client, transport: http(service.url) });
    const userOpHash = await bundlerClient.sendUserOperation({
      calls: [{ to: account.address, value: 0n }],
    });
    await proxy.held((request) => request.method === "eth_estimateGas");
    const answer = fetch(service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "eth_getUserOperationReceipt",
        params: [keccak256(toHex("unknown"))],
      }),
    }).then((response) => response.json());
    await proxy.held((request) => request.method === "eth_getLogs");
    proxy.hold();

    process.kill(service.pid, "SIGTERM");
    expect(await answer).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32603,
        message:
          "the bundler is shutting down and did not finish this request; retry (an operation being sent may already be stored: look it up by hash)",
        data: { retry: true },
      },
    });
    expect(await service.exited).toEqual({ code: 0, signal: null });
    // The bundling run still waited on the node: the grace period, not the orderly close, ended the process.
    expect(service.tail()).toContainEqual(
      expect.stringContaining('"message":"the shutdown grace period ran out;'),
    );

    proxy.release();
    const restarted = await start();
    const found = await createBundlerClient({
      client,
      transport: http(restarted.url),
    }).getUserOperation({ hash: userOpHash });
    expect(found.userOperation.sender).toBe(account.address);
  });
});
