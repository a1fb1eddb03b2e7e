import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { jsonRpcFastifyPlugin } from "../src/adapters/fastify.ts";
import {
  describeMountedEndpoint,
  hostHealth,
  type MountOptions,
  mountPath,
  origin,
} from "./mounted-endpoint.ts";
import { openRpcSocket } from "./rpc-socket.ts";
import { stubBundler } from "./stub-server.ts";

/** A Fastify app with a route of its own and the plugin registered with `register`'s options. */
const startFastify =
  (registration: (options: MountOptions) => Record<string, unknown>) =>
  async (options: MountOptions) => {
    const app = Fastify();
    app.get("/health", async () => hostHealth);
    await app.register(jsonRpcFastifyPlugin, { ...options, ...registration(options) });
    await app.listen({ port: 0, host: "127.0.0.1" });
    return { server: app.server, close: () => app.close() };
  };

describeMountedEndpoint(
  "Fastify plugin under a prefix",
  startFastify(() => ({ prefix: mountPath, basePath: undefined })),
);

describeMountedEndpoint(
  "Fastify plugin with a basePath",
  startFastify(() => ({})),
);

describe("Fastify plugin on close", () => {
  it("closes its WebSocket connections with 1001 when the app closes", async () => {
    const app = Fastify();
    await app.register(jsonRpcFastifyPlugin, { bundler: stubBundler, prefix: mountPath });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const socket = await openRpcSocket(`${origin(app.server).replace(/^http/, "ws")}${mountPath}`);
    await app.close();
    expect(await socket.closed).toBe(1001);
  });
});
