import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJsonRpcMetrics } from "../src/metrics.ts";
import { startMetricsServer } from "../src/metrics-server.ts";
import type { JsonRpcServer } from "../src/server.ts";
import { rawRequest, startStubServer, stubBundler, upgradeStatus } from "./stub-server.ts";

const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "test_mark" });
const chainId = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" });

describe("browser safety", () => {
  let marks = 0;
  let closed: JsonRpcServer;
  const mark = async () => ++marks;

  beforeAll(async () => {
    closed = await startStubServer({}, { test_mark: mark });
  });
  afterAll(() => closed?.close());

  it.each([
    ["text/plain", "text/plain;charset=UTF-8"],
    ["form-encoded", "application/x-www-form-urlencoded"],
    ["multipart", "multipart/form-data; boundary=x"],
  ])(
    "answers a %s POST with 415 naming the accepted type, and does not run it",
    async (_kind, type) => {
      const before = marks;
      const answer = await rawRequest(closed.url, {
        headers: { "content-type": type },
        body: call,
      });
      expect(answer.status).toBe(415);
      expect(answer.headers.accept).toBe(
        "application/json, application/json-rpc, application/jsonrequest",
      );
      expect(answer.body).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `unsupported content-type "${type}"; send the body as application/json`,
        },
      });
      expect(marks).toBe(before);
    },
  );

  it("answers a POST without content type with 415", async () => {
    const before = marks;
    const answer = await rawRequest(closed.url, { body: call });
    expect(answer.status).toBe(415);
    expect(answer.body.error.message).toBe(
      "no content-type given; send the body as application/json",
    );
    expect(marks).toBe(before);
  });

  it("runs a JSON body with or without parameters in its content type", async () => {
    for (const type of [
      "application/json",
      "Application/JSON; charset=utf-8",
      "application/json-rpc",
    ]) {
      const answer = await rawRequest(closed.url, {
        headers: { "content-type": type },
        body: chainId,
      });
      expect(answer).toMatchObject({ status: 200, body: { id: 1, result: "0x7a69" } });
    }
  });

  it("refuses a request whose Host is not served with 403 (DNS rebinding), and serves localhost and IP literals", async () => {
    const json = { "content-type": "application/json" };
    const port = closed.port;
    const before = marks;
    const rebound = await rawRequest(closed.url, {
      headers: { ...json, host: `attacker.example:${port}` },
      body: call,
    });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message:
          'host "attacker.example" is not served here; the operator can list it in allowedHosts',
      },
    });
    expect(marks).toBe(before);
    for (const host of [
      `localhost:${port}`,
      "LOCALHOST.",
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      "10.0.0.7",
    ]) {
      const answer = await rawRequest(closed.url, { headers: { ...json, host }, body: chainId });
      expect(answer.status, host).toBe(200);
    }
  });

  it("guards the metrics by Host too, not the health probe", async () => {
    const metrics = createJsonRpcMetrics({ bundler: { ...stubBundler, relayers: [] } });
    const server = await startStubServer({ metrics });
    try {
      const get = (path: string, host: string) =>
        rawRequest(new URL(path, server.url).href, { method: "GET", headers: { host } });
      expect((await get("/metrics", "attacker.example")).status).toBe(403);
      expect((await fetch(new URL("/metrics", server.url))).status).toBe(200);
      expect((await get("/health", "attacker.example")).status).toBe(200);
    } finally {
      await server.close();
      metrics.close();
    }
  });

  it("guards a metrics listener of its own by Host", async () => {
    const metrics = await startMetricsServer({ registry: new Registry() });
    try {
      const get = (host: string) => rawRequest(metrics.url, { method: "GET", headers: { host } });
      expect((await get("attacker.example")).status).toBe(403);
      expect((await get("localhost:9464")).status).toBe(200);
      expect((await get("127.0.0.1")).status).toBe(200);
    } finally {
      await metrics.close();
    }
  });

  it("serves the hosts listed in allowedHosts, or any with *", async () => {
    const json = { "content-type": "application/json" };
    const listed = await startStubServer({ allowedHosts: ["bundler.example.org"] });
    const any = await startStubServer({ allowedHosts: ["*"] });
    try {
      const host = (url: string, name: string) =>
        rawRequest(url, { headers: { ...json, host: name }, body: chainId });
      expect((await host(listed.url, "Bundler.Example.org:443")).status).toBe(200);
      expect((await host(listed.url, "localhost")).status).toBe(403);
      expect((await host(listed.url, "127.0.0.1")).status).toBe(200);
      expect((await host(any.url, "attacker.example")).status).toBe(200);
    } finally {
      await Promise.all([listed.close(), any.close()]);
    }
  });

  it("refuses a WebSocket upgrade from a web page's origin or to a foreign host, and accepts one without Origin", async () => {
    expect(await upgradeStatus(closed.webSocketUrl, {}, "https://attacker.example")).toBe(403);
    expect(await upgradeStatus(closed.webSocketUrl, { host: "attacker.example" })).toBe(403);
    expect(await upgradeStatus(closed.webSocketUrl, {})).toBe("open");
    const listed = await startStubServer({ allowedOrigins: ["https://app.example.org"] });
    try {
      expect(await upgradeStatus(listed.webSocketUrl, {}, "https://app.example.org")).toBe("open");
      expect(await upgradeStatus(listed.webSocketUrl, {}, "https://attacker.example")).toBe(403);
    } finally {
      await listed.close();
    }
  });

  it("sends no CORS headers by default, refuses preflights and requests from web pages", async () => {
    const before = marks;
    const plain = await rawRequest(closed.url, {
      headers: { "content-type": "application/json" },
      body: chainId,
    });
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.headers).filter((h) => h.startsWith("access-control-"))).toEqual([]);

    const preflight = await rawRequest(closed.url, {
      method: "OPTIONS",
      headers: { origin: "https://attacker.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
    expect(Object.keys(preflight.headers).filter((h) => h.startsWith("access-control-"))).toEqual(
      [],
    );
    expect(preflight.body.error.message).toBe(
      'requests from web pages of origin "https://attacker.example" are not allowed; the operator can list it in allowedOrigins',
    );

    const fromPage = await rawRequest(closed.url, {
      headers: { "content-type": "application/json", origin: "https://attacker.example" },
      body: call,
    });
    expect(fromPage.status).toBe(403);
    expect(marks).toBe(before);
  });

  it("answers CORS for the listed origins: preflight and request", async () => {
    const listed = await startStubServer(
      { allowedOrigins: ["https://App.example.org"] },
      { test_mark: mark },
    );
    const any = await startStubServer({ allowedOrigins: ["*"] });
    try {
      const origin = "https://app.example.org";
      const preflight = await rawRequest(listed.url, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,x-api-key",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers).toMatchObject({
        "access-control-allow-origin": origin,
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": "content-type,x-api-key",
        "access-control-max-age": "600",
      });
      expect(preflight.headers.vary).toContain("origin");

      const answer = await rawRequest(listed.url, {
        headers: { "content-type": "application/json", origin },
        body: call,
      });
      expect(answer).toMatchObject({ status: 200, body: { result: 1 } });
      expect(answer.headers["access-control-allow-origin"]).toBe(origin);
      // Even a listed origin cannot send a body the browser sends without a preflight.
      const plain = await rawRequest(listed.url, {
        headers: { "content-type": "text/plain", origin },
        body: call,
      });
      expect(plain.status).toBe(415);
      expect(plain.headers["access-control-allow-origin"]).toBe(origin);

      const wildcard = await rawRequest(any.url, {
        headers: { "content-type": "application/json", origin: "https://anyone.example" },
        body: chainId,
      });
      expect(wildcard.status).toBe(200);
      expect(wildcard.headers["access-control-allow-origin"]).toBe("*");
    } finally {
      await Promise.all([listed.close(), any.close()]);
    }
  });
});
