import { once } from "node:events";
import type { Server } from "node:http";
import express, { type Express } from "express";
import { createJsonRpcExpress } from "../src/adapters/express.ts";
import { createJsonRpcRequestListener } from "../src/http.ts";
import {
  describeMountedEndpoint,
  hostHealth,
  type MountOptions,
  mountPath,
} from "./mounted-endpoint.ts";

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
    return {
      server,
      async close() {
        await rpc.close();
        server.closeAllConnections();
        server.close();
      },
    };
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
    return {
      server,
      async close() {
        server.closeAllConnections();
        server.close();
      },
    };
  },
  // express.json() answers a body that is not JSON with its own 400.
  { webSocket: false, parseErrors: false },
);
