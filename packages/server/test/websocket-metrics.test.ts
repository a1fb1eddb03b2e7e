import { webSocket } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openRpcSocket,
  type RpcSocket,
} from "../../../packages/transport-jsonrpc/test/rpc-socket.ts";
import { metricValue } from "../../../packages/transport-jsonrpc/test/metric-value.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/** The service's one port: viem's bundler client over WebSocket, a status subscription, and the metrics scrape. */
describe("stand-alone service over WebSocket, with metrics", () => {
  let fx: ServiceFixture;
  let socket: RpcSocket;

  beforeAll(async () => {
    fx = await serviceFixture();
    socket = await openRpcSocket(fx.service.webSocketUrl);
  });
  afterAll(async () => {
    await socket?.close();
    await fx?.close();
  });

  /** A new account's first operation, sent by viem's bundler client over the service's WebSocket. */
  async function sendOverWebSocket() {
    const account = await fx.makeAccount("0.8");
    const bundlerClient = createBundlerClient({
      account,
      client: fx.client,
      transport: webSocket(fx.service.webSocketUrl, { reconnect: false }),
    });
    const prepared = await bundlerClient.prepareUserOperation({
      calls: [{ to: account.address, value: 0n }],
    });
    const userOpHash = await bundlerClient.sendUserOperation({
      ...prepared,
      signature: await account.signUserOperation(prepared as never),
    } as never);
    return { bundlerClient, userOpHash };
  }

  it("serves viem's bundler client over WebSocket and notifies the subscriber until inclusion", async () => {
    expect(fx.service.webSocketUrl).toBe(fx.service.url.replace(/^http/, "ws"));
    const subscription = (
      await socket.request({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_subscribe",
        params: ["userOperationStatus"],
      })
    ).result as string;

    const { bundlerClient, userOpHash } = await sendOverWebSocket();
    const [transactionHash] = await fx.service.bundler.sendBundleNow();

    expect((await socket.notification(subscription)).params.result).toEqual({
      userOpHash,
      status: "pending",
    });
    expect((await socket.notification(subscription)).params.result).toEqual({
      userOpHash,
      status: "submitted",
      transactionHash,
    });
    expect((await socket.notification(subscription)).params.result).toEqual({
      userOpHash,
      status: "included",
      transactionHash,
      success: true,
    });
    const receipt = await bundlerClient.getUserOperationReceipt({ hash: userOpHash });
    expect(receipt.receipt.transactionHash).toBe(transactionHash);
  });

  it("serves Prometheus metrics on the same port, counting one more operation, inclusion and bundle after one is sent over WebSocket", async () => {
    const scrape = async () => {
      const response = await fetch(new URL("/metrics", fx.service.url));
      expect(response.status).toBe(200);
      return response.text();
    };
    const counts = (text: string) => ({
      sent: metricValue(text, 'bundlekit_rpc_requests_total{transport="ws",method="eth_sendUserOperation",code="ok"}'),
      included: metricValue(text, 'bundlekit_user_operations{status="included"}'),
      bundles: metricValue(text, "bundlekit_bundles_submitted_total"),
    });
    const before = counts(await scrape());
    await sendOverWebSocket();
    await fx.service.bundler.sendBundleNow();
    const text = await scrape();
    expect(counts(text)).toEqual({ sent: before.sent + 1, included: before.included + 1, bundles: before.bundles + 1 });
    for (const relayer of fx.service.bundler.relayers)
      expect(text).toContain(`bundlekit_relayer_balance_wei{relayer="${relayer}"}`);
    expect(text).toContain("process_cpu_seconds_total");
  });

  it("answers health on the same port", async () => {
    const response = await fetch(new URL("/health", fx.service.url));
    expect(await response.json()).toEqual({ status: "ok" });
  });
});
