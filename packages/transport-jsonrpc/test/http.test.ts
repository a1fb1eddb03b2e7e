import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJsonRpcRequestListener } from "../src/http.ts";
import { maxBodyBytes, serverFixture } from "./fixture.ts";

/** Every answer of the HTTP side: status, content type and the JSON body. */
async function call(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  expect(response.headers.get("content-type")).toBe("application/json");
  return {
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: the tests read answers of every shape
    body: (await response.json()) as any,
  };
}

const post = (url: string, body: unknown) =>
  call(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("JSON-RPC over HTTP", () => {
  let fixture: Awaited<ReturnType<typeof serverFixture>>;
  let origin: string;

  beforeAll(async () => {
    fixture = await serverFixture();
    origin = new URL(fixture.server.url).origin;
  });
  afterAll(() => fixture?.stop());

  it("answers a request at the base path, with or without the trailing slash", async () => {
    for (const url of [fixture.server.url, fixture.server.url.replace(/\/$/, "")]) {
      const { status, body } = await post(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId" });
      expect(status).toBe(200);
      expect(body).toEqual({
        jsonrpc: "2.0",
        id: 1,
        result: `0x${fixture.devnet.chainId.toString(16)}`,
      });
    }
  });

  it("answers a batch in order, errors included", async () => {
    const { status, body } = await post(fixture.server.url, [
      { jsonrpc: "2.0", id: 1, method: "eth_supportedEntryPoints" },
      { jsonrpc: "2.0", id: 2, method: "no_suchMethod" },
      42,
    ]);
    expect(status).toBe(200);
    expect(body).toHaveLength(3);
    expect(body[0]).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: fixture.bundler.entryPoints.all.map((ep) => ep.address),
    });
    expect(body[1]).toMatchObject({ id: 2, error: { code: -32601 } });
    expect(body[2]).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("answers 204 with no body when the batch holds only notifications", async () => {
    const response = await fetch(fixture.server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ jsonrpc: "2.0", method: "eth_chainId" }]),
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
  });

  it("refuses GET on the JSON-RPC path with 405 and a JSON-RPC error", async () => {
    const { status, headers, body } = await call(fixture.server.url);
    expect(status).toBe(405);
    expect(headers.get("allow")).toBe("POST");
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(body.error.message).toContain("POST");
  });

  it("refuses a body over the limit with 413 and a JSON-RPC error naming the limit", async () => {
    const padding = "x".repeat(maxBodyBytes);
    const { status, body } = await post(fixture.server.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_chainId",
      params: [padding],
    });
    expect(status).toBe(413);
    expect(body).toMatchObject({ id: null, error: { code: -32600 } });
    expect(body.error.message).toContain(String(maxBodyBytes));
  });

  it("answers a body that is not JSON with -32700", async () => {
    const { status, body } = await post(fixture.server.url, '{"jsonrpc":"2.0","id":1,"method":');
    expect(status).toBe(200);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(body.error.message).toMatch(/^parse error: /);
  });

  it("answers an unknown path with a JSON 404 pointing at the endpoint", async () => {
    const { status, body } = await call(`${origin}/v2/nothing`, { method: "POST", body: "{}" });
    expect(status).toBe(404);
    expect(body).toMatchObject({ id: null, error: { code: -32600 } });
    expect(body.error.message).toContain(`/v1/${fixture.devnet.chainId}/`);
  });

  it("sends eth_subscribe to the WebSocket side", async () => {
    const { body } = await post(fixture.server.url, {
      jsonrpc: "2.0",
      id: 7,
      method: "eth_subscribe",
      params: ["userOperationStatus"],
    });
    expect(body).toMatchObject({ id: 7, error: { code: -32601 } });
    expect(body.error.message).toContain("WebSocket");
  });

  it("answers the health probe", async () => {
    const { status, body } = await call(`${origin}/health`);
    expect(status).toBe(200);
    expect(body).toEqual({ status: "ok" });
  });

  it("answers the health probe with 503 and the reason while checkHealth rejects, and ok once it resolves", async () => {
    let fault: string | undefined = "the database file /data/bundler.db is gone";
    const listener = createJsonRpcRequestListener({
      bundler: fixture.bundler,
      checkHealth: async () => {
        if (fault) throw new Error(fault);
      },
    });
    const server = createServer((request, response) => void listener(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const health = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
      expect(await call(health)).toMatchObject({ status: 503, body: { status: "unavailable", reason: fault } });
      fault = undefined;
      expect(await call(health)).toMatchObject({ status: 200, body: { status: "ok" } });
    } finally {
      server.close();
    }
  });
});
