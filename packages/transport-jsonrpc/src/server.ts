import { createServer, type Server } from "node:http";
import { RpcErrorCode } from "@bundlekit/core";
import { type ConnectionLimitOptions, limitConnections } from "./connection-limits.ts";
import { normalizePath } from "./endpoint.ts";
import { createJsonRpcRequestListener, type JsonRpcHttpOptions } from "./http.ts";
import { listen } from "./listen.ts";
import { refuseUpgrade, rpcError, sendJson } from "./respond.ts";
import type { JsonRpcWebSocketOptions } from "./socket-endpoint.ts";
import { createJsonRpcUpgradeHandler } from "./websocket.ts";

export interface JsonRpcServerOptions
  extends JsonRpcHttpOptions,
    JsonRpcWebSocketOptions,
    ConnectionLimitOptions {
  /** Default 0: a free port picked by the OS. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
}

export interface JsonRpcServer {
  /** e.g. `http://127.0.0.1:4337/v1/31337/` */
  url: string;
  /** The same endpoint over WebSocket, e.g. `ws://127.0.0.1:4337/v1/31337/` */
  webSocketUrl: string;
  port: number;
  server: Server;
  /** Close WebSocket connections (ending their subscriptions), then the HTTP server. */
  close(): Promise<void>;
}

/**
 * Serve the JSON-RPC endpoint on its own server: HTTP and WebSocket on one port and path, the
 * health probe and the metrics (when given), at `/health` and `/metrics` unless set otherwise.
 * Any other path gets a JSON 404. Connections past
 * `maxConnections` (or `maxConnectionsPerIp`) are answered busy (429, -32005) and closed.
 */
export async function startJsonRpcServer(options: JsonRpcServerOptions): Promise<JsonRpcServer> {
  // The server is the endpoint's own: its probe and scrape sit at the root by default.
  const listener = createJsonRpcRequestListener({
    ...options,
    healthPath: options.healthPath ?? "/health",
    metricsPath: options.metricsPath ?? "/metrics",
  });
  const upgrade = createJsonRpcUpgradeHandler(options);
  const basePath = normalizePath(options.basePath ?? "/");
  const notFound = rpcError(
    RpcErrorCode.invalidRequest,
    `no JSON-RPC endpoint here; POST to ${basePath}/`,
  );
  const server = createServer((request, response) => {
    if (limits.refuse(request, response)) return;
    listener(request, response)
      .then((handled) => {
        if (!handled) sendJson(response, 404, notFound);
      })
      .catch(() => {
        if (!response.headersSent)
          sendJson(response, 500, rpcError(RpcErrorCode.internalError, "internal error"));
      });
  });
  const limits = limitConnections(server, options);
  server.on("upgrade", (request, socket, head) => {
    if (limits.refuseUpgrade(request, socket) || upgrade(request, socket, head)) return;
    refuseUpgrade(socket, 404, notFound);
  });
  const { port, authority } = await listen(server, options.port ?? 0, options.host ?? "127.0.0.1");
  return {
    url: `http://${authority}${basePath}/`,
    webSocketUrl: `ws://${authority}${basePath}/`,
    port,
    server,
    async close() {
      await upgrade.close();
      await new Promise<void>((resolve, reject) => {
        // The listener may have been closed already, to stop accepting before a graceful close.
        if (server.listening) server.close((error) => (error ? reject(error) : resolve()));
        else resolve();
        server.closeAllConnections();
      });
    },
  };
}
