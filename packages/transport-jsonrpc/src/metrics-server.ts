import { createServer, type Server, type ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { defaultAllowedHosts, isAllowedHost } from "./browser-guard.ts";
import { normalizePath } from "./endpoint.ts";
import { listen } from "./listen.ts";

/** Write a Prometheus scrape of `registry` as the answer. */
export async function sendMetrics(response: ServerResponse, registry: Registry): Promise<void> {
  const text = await registry.metrics();
  response.writeHead(200, {
    "content-type": registry.contentType,
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

export interface MetricsServerOptions {
  registry: Registry;
  /** Default 0: a free port picked by the OS. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default `/metrics`. */
  path?: string;
  /** Host names served, as the JSON-RPC endpoint's `allowedHosts` (IP literals always pass). Default `["localhost"]`. */
  allowedHosts?: readonly string[];
}

export interface MetricsServer {
  /** The scrape URL, e.g. `http://127.0.0.1:9464/metrics`. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * Serve the Prometheus scrape on a listener of its own (`GET /metrics`, anything else 404), so
 * the JSON-RPC port can be public while metrics stay on an internal interface. A `Host` not in
 * `allowedHosts` gets 403, so a web page cannot read the scrape through DNS rebinding.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const path = normalizePath(options.path ?? "/metrics");
  const allowedHosts = (options.allowedHosts ?? defaultAllowedHosts).map((h) => h.toLowerCase());
  const server = createServer((request, response) => {
    if (!isAllowedHost(request.headers.host, allowedHosts)) {
      response.writeHead(403, { "content-type": "text/plain" }).end("host not served here\n");
      return;
    }
    if (request.method === "GET" && normalizePath(request.url ?? "/") === path) {
      sendMetrics(response, options.registry).catch(() => response.destroy());
      return;
    }
    response
      .writeHead(404, { "content-type": "text/plain" })
      .end(`not found; metrics are at ${path}\n`);
  });
  const { authority } = await listen(server, options.port ?? 0, options.host ?? "127.0.0.1");
  return {
    url: `http://${authority}${path}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
