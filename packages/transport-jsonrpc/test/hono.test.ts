import { once } from "node:events";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createJsonRpcFetchHandler } from "../src/adapters/fetch.ts";
import { createJsonRpcUpgradeHandler } from "../src/websocket.ts";
import {
  describeMountedEndpoint,
  hostHealth,
  type MountOptions,
  mountedApp,
  mountPath,
} from "./mounted-endpoint.ts";
import { stubBundler } from "./stub-server.ts";

/**
 * A Hono app with a route of its own, served by @hono/node-server; `mount` adds the fetch
 * handler, and WebSocket goes to the upgrade handler on the Node server.
 */
const startHono =
  (mount: (app: Hono, rpc: ReturnType<typeof createJsonRpcFetchHandler>) => void) =>
  async (options: MountOptions) => {
    const app = new Hono();
    app.get("/health", (c) => c.json(hostHealth));
    mount(app, createJsonRpcFetchHandler(options));
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
    await once(server, "listening");
    const upgrade = createJsonRpcUpgradeHandler(options);
    upgrade.attach(server);
    return mountedApp(server, () => upgrade.close());
  };

describeMountedEndpoint(
  "fetch handler on a Hono route",
  startHono((app, rpc) => app.all(`${mountPath}/*`, (c) => rpc(c.req.raw))),
);

describeMountedEndpoint(
  "fetch handler mounted in Hono, the request kept whole",
  startHono((app, rpc) => app.mount(mountPath, rpc, { replaceRequest: false })),
);

describe("fetch handler behind a Hono middleware that read the body", () => {
  it("answers 400 saying the body was read before it", async () => {
    const app = new Hono();
    const rpc = createJsonRpcFetchHandler({ bundler: stubBundler, basePath: mountPath });
    app.use(async (c, next) => {
      await c.req.json();
      await next();
    });
    app.all(`${mountPath}/*`, (c) => rpc(c.req.raw));
    const response = await app.request(`http://localhost${mountPath}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: -32600,
        message: expect.stringContaining("was read before the JSON-RPC endpoint"),
      },
    });
  });
});
