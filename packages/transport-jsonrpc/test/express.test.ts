import { once } from "node:events";
import type { Server } from "node:http";
import express, { type Express } from "express";
import { describe, expect, it } from "vitest";
import { createJsonRpcExpress } from "../src/adapters/express.ts";
import { createJsonRpcRequestListener } from "../src/http.ts";
import {
  describeMountedEndpoint,
  hostHealth,
  type MountOptions,
  mountedApp,
  mountPath,
  origin,
} from "./mounted-endpoint.ts";
import { rawRequest, stubBundler } from "./stub-server.ts";

/** An Express app with routes of its own; `mount` adds the endpoint before them. */
async function startExpress(mount: (app: Express) => void) {
  const app = express();
  mount(app);
  app.get("/health", (_request, response) => {
    response.json(hostHealth);
  });
  const server: Server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

/** The Express adapter mounted with `mount`, WebSocket attached to the app's server. */
const withAdapter =
  (mount: (app: Express, rpc: ReturnType<typeof createJsonRpcExpress>) => void) =>
  async (options: MountOptions) => {
    const rpc = createJsonRpcExpress(options);
    const server = await startExpress((app) => mount(app, rpc));
    rpc.attach(server);
    return mountedApp(server, () => rpc.close());
  };

describeMountedEndpoint(
  "Express adapter at the root, no body parser",
  withAdapter((app, rpc) => app.use(rpc.middleware)),
);

describeMountedEndpoint(
  "Express adapter after express.json(), mounted under its path",
  withAdapter((app, rpc) => {
    app.use(express.json());
    app.use(mountPath, rpc.middleware);
  }),
);

describeMountedEndpoint(
  "Express adapter before express.json()",
  withAdapter((app, rpc) => {
    app.use(rpc.middleware);
    app.use(express.json());
  }),
);

describeMountedEndpoint(
  "Express adapter after express.text() for every type",
  withAdapter((app, rpc) => {
    app.use(express.text({ type: "*/*" }));
    app.use(mountPath, rpc.middleware);
  }),
);

describeMountedEndpoint(
  "the plain request listener in Express after express.json(), under its mount path",
  async (options) => {
    const listener = createJsonRpcRequestListener(options);
    const server = await startExpress((app) => {
      app.use(express.json());
      app.use(mountPath, (request, response, next) => {
        listener(request, response).then((served) => served || next(), next);
      });
    });
    return mountedApp(server);
  },
  // express.json() answers a body that is not JSON with its own 400.
  { webSocket: false, parseErrors: false },
);

describe("Express adapter behind a middleware that reads the body and keeps nothing", () => {
  it("answers 400 saying the body was read before it, instead of waiting for it", async () => {
    const rpc = createJsonRpcExpress({ bundler: stubBundler, basePath: mountPath });
    const server = await startExpress((app) => {
      app.use((request, _response, next) => {
        request.on("end", () => next()).resume();
      });
      app.use(rpc.middleware);
    });
    try {
      const answer = await rawRequest(`${origin(server)}${mountPath}`, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }),
        signal: AbortSignal.timeout(5_000),
      });
      expect(answer).toMatchObject({
        status: 400,
        body: {
          error: {
            code: -32600,
            message:
              "the request body was read before the JSON-RPC endpoint and not kept (on request.body); mount the endpoint before the middleware that reads it",
          },
        },
      });
    } finally {
      await mountedApp(server).close();
    }
  });
});

describe("Express adapter after an express.json() with a smaller limit", () => {
  it("answers a body over the parser's limit with the transport's 413", async () => {
    const rpc = createJsonRpcExpress({ bundler: stubBundler, basePath: mountPath });
    const server = await startExpress((app) => {
      app.use(express.json({ limit: 100 }));
      app.use(rpc.middleware);
    });
    try {
      const answer = await rawRequest(`${origin(server)}${mountPath}`, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_chainId",
          params: ["x".repeat(200)],
        }),
        signal: AbortSignal.timeout(5_000),
      });
      expect(answer).toMatchObject({
        status: 413,
        body: { error: { code: -32600, message: "request body exceeds the limit of 100 bytes" } },
      });
    } finally {
      await mountedApp(server).close();
    }
  });
});
