import { once } from "node:events";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { createJsonRpcFetchHandler } from "../src/adapters/fetch.ts";
import { createJsonRpcUpgradeHandler } from "../src/websocket.ts";
import {
  describeMountedEndpoint,
  hostHealth,
  type MountOptions,
  mountedApp,
  mountPath,
} from "./mounted-endpoint.ts";

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
