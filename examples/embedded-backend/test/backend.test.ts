import { type Devnet, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, createWalletClient, http, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRpcSocket } from "../../../packages/transport-jsonrpc/test/rpc-socket.ts";
import { metricValue } from "../../../packages/transport-jsonrpc/test/metric-value.ts";
import { type Backend, bundlerPath, startBackend } from "../src/backend.ts";

/** The bundler inside a backend that keeps its own routes: HTTP and WebSocket on the backend's one server. */
describe("embedded backend", () => {
  let devnet: Devnet;
  let backend: Backend;

  beforeAll(async () => {
    devnet = await startDevnet();
    backend = await startBackend({
      rpcUrl: devnet.rpcUrl,
      relayerKeys: devnet.relayerKeys,
      bundleInterval: 100,
    });
  });
  afterAll(async () => {
    await backend?.close();
    await devnet?.stop();
  });

  it("keeps serving its own route", async () => {
    const response = await fetch(`${backend.origin}/hello`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ hello: "world", chainId: devnet.chainId });
    const missing = await fetch(`${backend.origin}/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "no route for GET /nothing" });
  });

  /**
   * A new account's first operation, sent with viem over HTTP while a WebSocket subscriber
   * follows it: its receipt, and the first three statuses the subscriber was told.
   */
  async function followedOperation() {
    const socket = await openRpcSocket(`${backend.origin.replace(/^http/, "ws")}${bundlerPath}`);
    try {
      const subscription = (
        await socket.request({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_subscribe",
          params: ["userOperationStatus"],
        })
      ).result as string;
      const chain = devnet.chain;
      const client = createPublicClient({
        chain,
        transport: http(devnet.rpcUrl),
        pollingInterval: 100,
      });
      const account = await toSimpleAccount({
        client,
        owner: privateKeyToAccount(generatePrivateKey()),
        version: "0.7",
      });
      const funder = createWalletClient({
        chain,
        transport: http(devnet.rpcUrl),
        account: privateKeyToAccount(devnet.accountKeys[1]!),
      });
      await client.waitForTransactionReceipt({
        hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }),
      });

      const bundlerClient = createBundlerClient({
        account,
        client,
        transport: http(`${backend.origin}${bundlerPath}`),
        pollingInterval: 100,
      });
      const userOpHash = await bundlerClient.sendUserOperation({
        calls: [{ to: account.address, value: 0n }],
      });
      const receipt = await bundlerClient.waitForUserOperationReceipt({
        hash: userOpHash,
        timeout: 30_000,
      });
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await socket.notification(subscription)).params.result);
      return { userOpHash, receipt, statuses };
    } finally {
      await socket.close();
    }
  }

  it("sends an operation with viem over HTTP while a WebSocket subscriber follows it to inclusion", async () => {
    const { userOpHash, receipt, statuses } = await followedOperation();
    expect(receipt.success).toBe(true);
    expect(statuses).toEqual([
      { userOpHash, status: "pending" },
      { userOpHash, status: "submitted", transactionHash: receipt.receipt.transactionHash },
      {
        userOpHash,
        status: "included",
        transactionHash: receipt.receipt.transactionHash,
        success: true,
      },
    ]);
  });

  it("serves the bundler's health and metrics under its own path, counting an operation sent and a subscription", async () => {
    expect(await (await fetch(`${backend.origin}${bundlerPath}/health`)).json()).toEqual({
      status: "ok",
    });
    const counts = async () => {
      const text = await (await fetch(`${backend.origin}${bundlerPath}/metrics`)).text();
      return {
        sent: metricValue(text, 'bundlekit_rpc_requests_total{transport="http",method="eth_sendUserOperation",code="ok"}'),
        subscribed: metricValue(text, 'bundlekit_rpc_requests_total{transport="ws",method="eth_subscribe",code="ok"}'),
        included: metricValue(text, 'bundlekit_user_operations{status="included"}'),
      };
    };
    const before = await counts();
    await followedOperation();
    expect(await counts()).toEqual({
      sent: before.sent + 1,
      subscribed: before.subscribed + 1,
      included: before.included + 1,
    });
    // The backend's root paths stay its own.
    expect((await fetch(`${backend.origin}/metrics`)).status).toBe(404);
  });

  it("refuses WebSocket upgrades outside the bundler's path", async () => {
    await expect(openRpcSocket(`${backend.origin.replace(/^http/, "ws")}/hello`)).rejects.toThrow(
      /cannot connect/,
    );
  });
});
