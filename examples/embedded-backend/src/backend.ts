import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Bundler, createBundler } from "@bundlekit/core";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { createSqliteMempoolStore } from "@bundlekit/storage-kysely";
import {
  createJsonRpcMetrics,
  createJsonRpcRequestListener,
  createJsonRpcUpgradeHandler,
} from "@bundlekit/transport-jsonrpc";
import { createPublicClient, type Hex, http } from "viem";

export interface BackendOptions {
  /** The node the bundler serves. */
  rpcUrl: string;
  /** Keys of the relayer accounts that pay for bundles. */
  relayerKeys: Hex[];
  /** Default 0: a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** SQLite file of the mempool. Default `:memory:`. */
  database?: string;
  /** Milliseconds between bundles. Default 1000. */
  bundleInterval?: number;
}

export interface Backend {
  /** e.g. `http://127.0.0.1:3000` */
  origin: string;
  bundler: Bundler;
  close(): Promise<void>;
}

/** Where the bundler lives inside this backend. */
export const bundlerPath = "/bundler";

function sendJson(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/**
 * An existing Node HTTP backend with routes of its own (`GET /hello`) that embeds the bundler
 * engine: JSON-RPC over HTTP and WebSocket at `/bundler`, its health and Prometheus metrics at
 * `/bundler/health` and `/bundler/metrics`, all on the backend's one server.
 */
export async function startBackend(options: BackendOptions): Promise<Backend> {
  const client = createPublicClient({ transport: http(options.rpcUrl), pollingInterval: 250 });
  const store = await createSqliteMempoolStore({ filename: options.database ?? ":memory:" });
  const bundler = await createBundler({
    client,
    store,
    signer: createLocalKeySigner(options.relayerKeys),
    settings: { bundling: { intervalMs: options.bundleInterval ?? 1_000 } },
  });
  const metrics = createJsonRpcMetrics({ bundler, client, store });
  const rpc = createJsonRpcRequestListener({
    bundler,
    basePath: bundlerPath,
    metrics, // the probe and the scrape sit below basePath: /bundler/health, /bundler/metrics
  });
  const upgrade = createJsonRpcUpgradeHandler({ bundler, basePath: bundlerPath, metrics });

  const server = createServer(async (request, response) => {
    try {
      if (await rpc(request, response)) return;
      if (request.method === "GET" && request.url === "/hello") {
        sendJson(response, 200, { hello: "world", chainId: bundler.chainId });
      } else {
        sendJson(response, 404, { error: `no route for ${request.method} ${request.url}` });
      }
    } catch {
      if (!response.headersSent) sendJson(response, 500, { error: "internal error" });
    }
  });
  // WebSocket upgrades for the bundler's path go to the transport; the backend has no others.
  server.on("upgrade", (request, socket, head) => {
    if (!upgrade(request, socket, head))
      socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n");
  });

  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  bundler.start();
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    bundler,
    async close() {
      await upgrade.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await bundler.stop();
      metrics.close();
      await store.close?.();
    },
  };
}
