import type { ChainClient, StatusChange } from "@bundlekit/core";
import { createSimulatedClock } from "../../core/src/simulation/simulated-clock.ts";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJsonRpcMetrics } from "../src/metrics.ts";
import { serverFixture } from "./fixture.ts";
import { openRpcSocket } from "./rpc-socket.ts";

/** The value of one series in Prometheus text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const json = { "content-type": "application/json" };

describe("Prometheus metrics", () => {
  let fixture: Awaited<ReturnType<typeof serverFixture>>;
  let metricsUrl: string;

  beforeAll(async () => {
    fixture = await serverFixture();
    metricsUrl = new URL("/metrics", fixture.server.url).href;
  });
  afterAll(() => fixture?.stop());

  const post = (body: unknown) =>
    fetch(fixture.server.url, { method: "POST", headers: json, body: JSON.stringify(body) });

  it("counts requests by transport, method and code, with unknown names collapsed", async () => {
    await post({ jsonrpc: "2.0", id: 1, method: "eth_chainId" });
    await post([
      { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
      { jsonrpc: "2.0", id: 2, method: "attacker_chosen_1" },
      { jsonrpc: "2.0", id: 3, method: "attacker_chosen_2" },
      { jsonrpc: "2.0", id: 4, method: "eth_getUserOperationByHash", params: ["0x12"] },
      "not a request",
    ]);
    await fetch(fixture.server.url, { method: "POST", headers: json, body: "{" });
    const socket = await openRpcSocket(fixture.server.webSocketUrl);
    await socket.request({ jsonrpc: "2.0", id: 1, method: "eth_chainId" });
    await socket.request({
      jsonrpc: "2.0",
      id: 2,
      method: "eth_subscribe",
      params: ["userOperationStatus"],
    });
    await socket.close();

    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await response.text();
    const requests = (labels: string) => sample(text, `bundlekit_rpc_requests_total{${labels}}`);
    expect(requests('transport="http",method="eth_chainId",code="ok"')).toBe(2);
    expect(requests('transport="http",method="unknown",code="-32601"')).toBe(2);
    expect(requests('transport="http",method="eth_getUserOperationByHash",code="-32602"')).toBe(1);
    expect(requests('transport="http",method="invalid",code="-32600"')).toBe(1);
    expect(requests('transport="http",method="invalid",code="-32700"')).toBe(1);
    expect(requests('transport="ws",method="eth_chainId",code="ok"')).toBe(1);
    expect(requests('transport="ws",method="eth_subscribe",code="ok"')).toBe(1);
    expect(text).not.toContain("attacker_chosen");
    expect(sample(text, 'bundlekit_rpc_request_duration_seconds_count{method="eth_chainId"}')).toBe(
      3,
    );
    // The server sees the close a moment after the client does.
    await expect
      .poll(async () =>
        sample(await fixture.metrics.registry.metrics(), "bundlekit_websocket_connections"),
      )
      .toBe(0);
  });

  it("reports operations by status, bundles sent and relayer balances after a bundle", async () => {
    const account = await fixture.makeAccount("0.7");
    const op = await fixture.makeOperation(fixture.bundler, account, {
      to: `0x${"88".repeat(20)}`,
      value: 1n,
    });
    await fixture.bundler.sendUserOperation(op, account.entryPoint.address);
    const pending = await (await fetch(metricsUrl)).text();
    expect(sample(pending, 'bundlekit_user_operations{status="pending"}')).toBe(1);
    expect(sample(pending, 'bundlekit_user_operation_status_changes_total{status="pending"}')).toBe(
      1,
    );
    expect(sample(pending, "bundlekit_bundles_submitted_total")).toBe(0);

    const sent = await fixture.bundler.sendBundleNow();
    expect(sent).toHaveLength(1);
    const text = await (await fetch(metricsUrl)).text();
    expect(sample(text, 'bundlekit_user_operations{status="pending"}')).toBe(0);
    expect(sample(text, 'bundlekit_user_operations{status="included"}')).toBe(1);
    expect(sample(text, 'bundlekit_user_operation_status_changes_total{status="submitted"}')).toBe(
      1,
    );
    expect(sample(text, 'bundlekit_user_operation_status_changes_total{status="included"}')).toBe(
      1,
    );
    expect(sample(text, "bundlekit_bundles_submitted_total")).toBe(1);
    expect(fixture.bundler.relayers.length).toBeGreaterThan(0);
    // Balances are read in the background: the bundle's inclusion asks for a fresh read.
    const balances = await Promise.all(
      fixture.bundler.relayers.map((address) => fixture.client.getBalance({ address })),
    );
    await expect
      .poll(async () => {
        const scraped = await (await fetch(metricsUrl)).text();
        return fixture.bundler.relayers.map((relayer) =>
          sample(scraped, `bundlekit_relayer_balance_wei{relayer="${relayer}"}`),
        );
      })
      .toEqual(balances.map(Number));
  });

  it("joins a host application's registry, served by the host", async () => {
    const host = new Registry();
    const metrics = createJsonRpcMetrics({
      bundler: fixture.bundler,
      client: fixture.client as unknown as ChainClient,
      registry: host,
    });
    try {
      expect(metrics.registry).toBe(host);
      await expect.poll(() => host.metrics()).toContain("bundlekit_relayer_balance_wei{relayer=");
      const text = await host.metrics();
      expect(text).toContain("bundlekit_rpc_requests_total");
      expect(text).not.toContain("bundlekit_user_operations{"); // no store given
    } finally {
      metrics.close();
    }
  });

  it("leaves out a relayer balance the node never reported, and still answers the scrape", async () => {
    let asked = 0;
    const broken = {
      getBalance: () => {
        asked++;
        return Promise.reject(new Error("node down"));
      },
    } as unknown as ChainClient;
    const metrics = createJsonRpcMetrics({ bundler: fixture.bundler, client: broken });
    try {
      await expect.poll(() => asked).toBe(fixture.bundler.relayers.length);
      const text = await metrics.registry.metrics();
      expect(text).toContain("# TYPE bundlekit_relayer_balance_wei gauge");
      expect(text).not.toContain("bundlekit_relayer_balance_wei{");
      expect(sample(text, "bundlekit_relayer_balances_refreshed_timestamp_seconds")).toBe(0);
    } finally {
      metrics.close();
    }
  });

  it("reads balances on the clock's interval, one read at a time, and keeps the last values while a read hangs", async () => {
    const start = 1_700_000_000_000;
    const clock = createSimulatedClock(start);
    const reads: { address: string; answer: (balance: bigint) => void }[] = [];
    const node = {
      getBalance: ({ address }: { address: string }) =>
        new Promise<bigint>((resolve) => reads.push({ address, answer: resolve })),
    } as unknown as ChainClient;
    const relayers = fixture.bundler.relayers;
    const metrics = createJsonRpcMetrics({
      bundler: fixture.bundler,
      client: node,
      clock,
      refreshIntervalMs: 1000,
    });
    const scraped = async () => {
      const text = await metrics.registry.metrics();
      return relayers.map((relayer) =>
        sample(text, `bundlekit_relayer_balance_wei{relayer="${relayer}"}`),
      );
    };
    try {
      expect(reads.map((read) => read.address)).toEqual(relayers);
      for (const read of reads.splice(0)) read.answer(5n);
      await expect.poll(scraped).toEqual(relayers.map(() => 5));
      const refreshedAt = async () =>
        sample(
          await metrics.registry.metrics(),
          "bundlekit_relayer_balances_refreshed_timestamp_seconds",
        );
      expect(await refreshedAt()).toBe(start / 1000);

      await clock.advanceBy(1000); // the next read hangs: the scrape answers with the last values
      expect(reads).toHaveLength(relayers.length);
      expect(await scraped()).toEqual(relayers.map(() => 5));
      await clock.advanceBy(5000); // no second read while the first hangs
      expect(reads).toHaveLength(relayers.length);

      for (const read of reads.splice(0)) read.answer(7n);
      await expect.poll(scraped).toEqual(relayers.map(() => 7));
      expect(await refreshedAt()).toBe((start + 6000) / 1000);
    } finally {
      metrics.close();
    }
  });

  it("reads the relayer balances once for the bundles mined within 250 ms, not once per operation or bundle", async () => {
    let reads = 0;
    const node = {
      getBalance: async () => {
        reads++;
        return 1n;
      },
    } as unknown as ChainClient;
    const listeners: ((change: StatusChange) => void)[] = [];
    const bundler = {
      relayers: [fixture.bundler.relayers[0]!],
      onStatusChange(listener: (change: StatusChange) => void) {
        listeners.push(listener);
        return () => {};
      },
    };
    const clock = createSimulatedClock(1_700_000_000_000);
    const metrics = createJsonRpcMetrics({ bundler, client: node, clock, refreshIntervalMs: 60_000 });
    const emit = (change: StatusChange) => {
      for (const listener of listeners) listener(change);
    };
    const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
    try {
      await expect.poll(() => reads).toBe(1); // the first read, at start
      // Two bundles mined, their operations' changes interleaved.
      for (const op of [1, 2, 3])
        for (const bundle of [100, 101])
          emit({ userOpHash: hash(bundle + op), status: "included", transactionHash: hash(bundle), success: true });
      await clock.advanceBy(249);
      expect(reads).toBe(1);
      await clock.advanceBy(1);
      await expect.poll(() => reads).toBe(2);
      emit({ userOpHash: hash(200), status: "failed", transactionHash: hash(102), reason: "reverted" });
      await clock.advanceBy(250);
      await expect.poll(() => reads).toBe(3);
      await clock.advanceBy(10_000);
      expect(reads).toBe(3);
    } finally {
      metrics.close();
    }
  });
});
