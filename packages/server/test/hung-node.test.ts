import { keccak256, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricValue } from "../../../packages/transport-jsonrpc/test/metric-value.ts";
import { openRpcSocket } from "../../../packages/transport-jsonrpc/test/rpc-socket.ts";
import { type NodeProxy, startNodeProxy } from "./node-proxy.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * The service in front of a node that stops answering (a proxy holding every request): the
 * scrape is served from cached values, simulations beyond the cap are refused at once, and
 * cheap methods never wait. The node timeout is long here, so that only those mechanisms (not
 * a timeout) can answer while the node hangs.
 */
describe("stand-alone service with a hung node", () => {
  let fx: ServiceFixture;

  beforeAll(async () => {
    fx = await serviceFixture(
      {
        nodeTimeoutMs: 120_000,
        metricsPort: 0,
        // No wait bound: only the count bounds act while the node hangs.
        bundler: {
          validation: {
            maxConcurrentSimulations: 2,
            maxQueuedSimulations: 1,
            maxSimulationWaitMs: 600_000,
          },
        },
      },
      { behindProxy: true },
    );
  });
  afterAll(() => fx?.close());

  const scrape = async (url: string, init?: RequestInit) => {
    const response = await fetch(url, init);
    return { status: response.status, text: await response.text() };
  };
  const relayerBalances = (text: string) =>
    fx.service.bundler.relayers.map((relayer) =>
      metricValue(text, `bundlekit_relayer_balance_wei{relayer="${relayer}"}`),
    );

  it("serves /metrics on its own port, and answers 404 for it on the public port", async () => {
    const metricsUrl = fx.service.metricsUrl!;
    expect(new URL(metricsUrl).port).not.toBe(new URL(fx.service.url).port);
    const own = await scrape(metricsUrl);
    expect(own.status).toBe(200);
    expect(own.text).toContain("# TYPE bundlekit_rpc_requests_total counter");
    const onPublic = await fetch(new URL("/metrics", fx.service.url));
    expect(onPublic.status).toBe(404);
    expect(await onPublic.text()).not.toContain("bundlekit_");
  });

  it("answers a scrape while the node hangs, with the relayer balances last read", async () => {
    const balances = await Promise.all(
      fx.service.bundler.relayers.map((address) => fx.client.getBalance({ address })),
    );
    expect(balances.length).toBeGreaterThan(0);
    await expect
      .poll(async () => relayerBalances((await scrape(fx.service.metricsUrl!)).text))
      .toEqual(balances.map(Number));

    fx.proxy!.hold();
    try {
      await fx.proxy!.held(); // the engine's own polling is now stuck on the node
      // The bound: a scrape that waited on the hung node would be cut off here.
      const { status, text } = await scrape(fx.service.metricsUrl!, { signal: AbortSignal.timeout(5_000) });
      expect(status).toBe(200);
      expect(relayerBalances(text)).toEqual(balances.map(Number));
      expect(
        metricValue(text, "bundlekit_relayer_balances_refreshed_timestamp_seconds"),
      ).toBeGreaterThan(0);
    } finally {
      fx.proxy!.release();
    }
  }, 30_000);

  it("refuses a simulation beyond the cap and the queue with -32005 at once, still answers eth_chainId, and simulates again after the node answers", async () => {
    const account = await fx.makeAccount("0.7");
    const op = await fx.signedOperation(account);
    const estimate = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "eth_estimateUserOperationGas",
      params: [op, fx.entryPoint("0.7")],
    });
    const socket = await openRpcSocket(fx.service.webSocketUrl);
    fx.proxy!.hold();
    try {
      // One connection, so the engine sees them in this order: two run, one waits, the fourth is refused.
      const waiting = [1, 2, 3].map((id) => socket.request(estimate(id)));
      const refused = await socket.request(estimate(4));
      expect(refused.error).toEqual({
        code: -32005,
        message:
          "the bundler is busy: 2 simulations are running and 1 waiting, the most it takes; retry in a moment",
        data: { running: 2, queued: 1, retry: true, retryAfter: expect.any(Number) },
      });
      expect(await socket.request({ jsonrpc: "2.0", id: 5, method: "eth_chainId" })).toEqual({
        jsonrpc: "2.0",
        id: 5,
        result: toHex(fx.devnet.chainId),
      });

      fx.proxy!.release();
      const answers = await Promise.all(waiting);
      for (const answer of answers) {
        expect(answer.error).toBeUndefined();
        expect(answer.result).toEqual(answers[0]!.result);
      }
      expect(answers[0]!.result).toMatchObject({
        callGasLimit: expect.stringMatching(/^0x[0-9a-f]+$/),
      });
      expect((await socket.request(estimate(6))).result).toEqual(answers[0]!.result);
    } finally {
      fx.proxy!.release();
      await socket.close();
    }
  });

  it("over HTTP answers the refused send 429 with Retry-After while eth_chainId answers, and admits every send it took once the node answers", async () => {
    const ops: Record<string, unknown>[] = [];
    for (let i = 0; i < 4; i++) ops.push(await fx.signedOperation(await fx.makeAccount("0.7")));
    const send = (op: Record<string, unknown>, id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "eth_sendUserOperation",
      params: [op, fx.entryPoint("0.7")],
    });
    const post = (body: unknown) =>
      fetch(fx.service.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    fx.proxy!.hold();
    try {
      // One batch, so the engine takes them in this order: two run, the third waits.
      const taken = post([send(ops[0]!, 1), send(ops[1]!, 2), send(ops[2]!, 3)]);
      await fx.proxy!.held();
      const refused = await post(send(ops[3]!, 4));
      expect(refused.status).toBe(429);
      const body = (await refused.json()) as { error: { data: { retryAfter: number } } };
      expect(body).toMatchObject({
        id: 4,
        error: { code: -32005, data: { running: 2, queued: 1, retry: true } },
      });
      // The advice in the body and the header agree: the queue's drain time, at least a second.
      expect(body.error.data.retryAfter).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get("retry-after")).toBe(String(body.error.data.retryAfter));
      const chainId = await post({ jsonrpc: "2.0", id: 5, method: "eth_chainId" });
      expect(chainId.status).toBe(200);
      expect(await chainId.json()).toEqual({
        jsonrpc: "2.0",
        id: 5,
        result: toHex(fx.devnet.chainId),
      });
      // A batch only partly refused is answered 200: its other answers must not be sent again.
      const mixed = await post([
        send(ops[3]!, 6),
        { jsonrpc: "2.0", id: 7, method: "eth_chainId" },
      ]);
      expect(mixed.status).toBe(200);
      expect(await mixed.json()).toMatchObject([
        { id: 6, error: { code: -32005 } },
        { id: 7, result: toHex(fx.devnet.chainId) },
      ]);

      fx.proxy!.release();
      const answers = (await (await taken).json()) as { result?: string; error?: unknown }[];
      expect(answers.map((a) => a.error)).toEqual([undefined, undefined, undefined]);
      const retried = await post(send(ops[3]!, 8));
      expect(retried.status).toBe(200);
      const hashes = [
        ...answers.map((a) => a.result),
        ((await retried.json()) as { result: string }).result,
      ];
      for (const hash of hashes)
        expect((await fx.call("eth_getUserOperationByHash", [hash])).result).not.toBeNull();
    } finally {
      fx.proxy!.release();
    }
  });
});

describe("stand-alone service's node timeouts", () => {
  let fx: ServiceFixture;
  let submitEndpoint: NodeProxy;

  beforeAll(async () => {
    // A submission endpoint that accepts every request and never answers.
    submitEndpoint = await startNodeProxy("http://127.0.0.1:9");
    submitEndpoint.hold();
    fx = await serviceFixture(
      {
        nodeTimeoutMs: 200,
        nodeRetryCount: 1,
        bundler: { relaying: { submitUrl: submitEndpoint.url } },
      },
      { behindProxy: true },
    );
  });
  afterAll(async () => {
    await fx?.close();
    await submitEndpoint?.close();
  });

  it("gives up on a node request after the configured timeout and one retry, answering -32603", async () => {
    const lookup = (request: { method: string }) => request.method === "eth_getLogs";
    fx.proxy!.hold(lookup);
    try {
      const answer = await fx.call("eth_getUserOperationReceipt", [keccak256(toHex("unknown"))]);
      expect(answer).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32603, message: "internal error" },
      });
      expect(fx.proxy!.heldCount(lookup)).toBe(2);
    } finally {
      fx.proxy!.release();
    }
  }, 30_000);

  it("gives up on a bundle sent to a hung rpcEndpointSubmit after the configured timeout, and keeps the operation pending", async () => {
    const account = await fx.makeAccount("0.7");
    const op = await fx.signedOperation(account);
    const { result: userOpHash } = await fx.call("eth_sendUserOperation", [
      op,
      fx.entryPoint("0.7"),
    ]);
    // Each send gives up after 200 ms and one retry; with viem's defaults (10 s a try, three retries: 40 s) it would outlast the test's bound.
    expect(await fx.service.bundler.sendBundleNow()).toEqual([]);
    expect(
      submitEndpoint.heldCount((request) => request.method === "eth_sendRawTransaction"),
    ).toBeGreaterThan(0);
    expect((await fx.call("eth_getUserOperationByHash", [userOpHash])).result).toMatchObject({
      blockNumber: null,
    });
  }, 30_000);
});
