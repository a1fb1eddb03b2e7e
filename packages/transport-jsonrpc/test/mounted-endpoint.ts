import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJsonRpcMetrics, type JsonRpcMetrics } from "../src/metrics.ts";
import { openRpcSocket } from "./rpc-socket.ts";
import { rawRequest, stubBundler, upgradeStatus } from "./stub-server.ts";

/** Where the tests mount the endpoint in a host app. */
export const mountPath = "/bundler";

/** The body limit of the mounted endpoints: small enough to exceed in a test. */
export const mountedMaxBodyBytes = 1024;

/** What the host app answers on its own routes (`GET /health`, `GET /hello`). */
export const hostHealth = { app: "ok" };

/** A host app with the endpoint mounted at `mountPath`, listening on `server`. */
export interface MountedApp {
  server: Server;
  close(): Promise<void>;
}

/** What a test app gets to mount: the stub engine's options, with metrics. */
export interface MountOptions {
  bundler: typeof stubBundler;
  basePath: string;
  maxBodyBytes: number;
  metrics: JsonRpcMetrics;
}

/** The app on `server`; closing it runs `before` (e.g. closing WebSockets), then ends every connection. */
export const mountedApp = (server: Server, before = async () => {}): MountedApp => ({
  server,
  async close() {
    await before();
    server.closeAllConnections();
    server.close();
  },
});

export const origin = (server: Server) =>
  `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const chainIdCall = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" });
const json = { "content-type": "application/json" };

/**
 * One request, bounded: a request the endpoint never answers (e.g. a body it waits for that
 * was already read) fails the test instead of hanging it.
 */
const send = (url: string, init: Parameters<typeof rawRequest>[1] = {}) =>
  rawRequest(url, { ...init, signal: AbortSignal.timeout(5_000) });

/**
 * What every framework's mounting must do: JSON-RPC over HTTP (and WebSocket) at the mount
 * path, the host's own routes left to the host, the bundler's probe and scrape below the mount
 * path, and the body checks of the transport.
 */
export function describeMountedEndpoint(
  name: string,
  start: (options: MountOptions) => Promise<MountedApp>,
  {
    webSocket = true,
    /** False where a body parser of the host's answers a body that is not JSON itself. */
    parseErrors = true,
  } = {},
) {
  describe(name, () => {
    let app: MountedApp;
    let base: string;
    const metrics = createJsonRpcMetrics({ bundler: { ...stubBundler, relayers: [] } });

    beforeAll(async () => {
      app = await start({
        bundler: stubBundler,
        basePath: mountPath,
        maxBodyBytes: mountedMaxBodyBytes,
        metrics,
      });
      base = origin(app.server);
    });
    afterAll(async () => {
      await app?.close();
      metrics.close();
    });

    it("answers a JSON-RPC call at the mount path, with or without the trailing slash", async () => {
      for (const path of [mountPath, `${mountPath}/`, `${mountPath}?apikey=1`]) {
        const answer = await send(base + path, { headers: json, body: chainIdCall });
        expect(answer, path).toMatchObject({
          status: 200,
          body: { jsonrpc: "2.0", id: 1, result: "0x7a69" },
        });
      }
    });

    if (webSocket)
      it("answers over WebSocket at the same path, and refuses upgrades elsewhere with 404", async () => {
        const socket = await openRpcSocket(`${base.replace(/^http/, "ws")}${mountPath}`, 5_000);
        try {
          expect(await socket.request({ jsonrpc: "2.0", id: 2, method: "eth_chainId" })).toEqual({
            jsonrpc: "2.0",
            id: 2,
            result: "0x7a69",
          });
        } finally {
          await socket.close();
        }
        expect(await upgradeStatus(`${base.replace(/^http/, "ws")}/elsewhere`)).toBe(404);
      });

    it("leaves the app's own /health, /metrics and routes to the app, and serves its probe and scrape below the mount path", async () => {
      expect(await send(`${base}/health`, { method: "GET" })).toMatchObject({
        status: 200,
        body: hostHealth,
      });
      expect((await send(`${base}/metrics`, { method: "GET" })).status).toBe(404);
      expect(await send(`${base}${mountPath}/health`, { method: "GET" })).toMatchObject({
        status: 200,
        body: { status: "ok" },
      });
      const scrape = await send(`${base}${mountPath}/metrics`, { method: "GET" });
      expect(scrape.status).toBe(200);
      expect(scrape.body).toContain("# TYPE");
    });

    it.runIf(parseErrors)("answers a body that is not JSON with -32700", async () => {
      const answer = await send(base + mountPath, { headers: json, body: '{"jsonrpc":' });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
      expect(answer.body.error.message).toMatch(/^parse error: /);
    });

    it("refuses a text/plain body or one without content type with 415, and a GET with 405", async () => {
      const plain = await send(base + mountPath, {
        headers: { "content-type": "text/plain" },
        body: chainIdCall,
      });
      expect(plain).toMatchObject({
        status: 415,
        body: {
          error: {
            code: -32600,
            message: 'unsupported content-type "text/plain"; send the body as application/json',
          },
        },
      });
      expect(await send(base + mountPath, { body: chainIdCall })).toMatchObject({
        status: 415,
        body: { error: { message: "no content-type given; send the body as application/json" } },
      });
      expect((await send(base + mountPath, { method: "GET" })).status).toBe(405);
    });

    it("refuses a body over maxBodyBytes with 413", async () => {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_chainId",
        params: ["x".repeat(mountedMaxBodyBytes)],
      });
      const answer = await send(base + mountPath, { headers: json, body });
      expect(answer).toMatchObject({
        status: 413,
        body: {
          error: {
            code: -32600,
            message: `request body exceeds the limit of ${mountedMaxBodyBytes} bytes`,
          },
        },
      });
    });

    it("refuses a foreign Host with 403 (DNS rebinding)", async () => {
      const answer = await send(base + mountPath, {
        headers: { ...json, host: "attacker.example" },
        body: chainIdCall,
      });
      expect(answer.status).toBe(403);
      expect(answer.body.error.message).toContain('host "attacker.example" is not served here');
    });
  });
}
