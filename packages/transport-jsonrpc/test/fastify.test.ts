import Fastify from "fastify";
import { jsonRpcFastifyPlugin } from "../src/adapters/fastify.ts";
import {
  describeMountedEndpoint,
  hostHealth,
  type MountOptions,
  mountPath,
} from "./mounted-endpoint.ts";

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
