import type { IncomingMessage, ServerResponse } from "node:http";
import { BundlerError, RpcErrorCode, type RpcMethod } from "@bundlekit/core";
import { type JsonRpcEndpointOptions, normalizePath, resolveEndpoint } from "./endpoint.ts";
import { sendMetrics } from "./metrics-server.ts";
import { rpcError, sendJson } from "./respond.ts";

export interface JsonRpcHttpOptions extends JsonRpcEndpointOptions {
  /** Path of the health probe (`GET` answers `{"status":"ok"}`); `false` serves none. Default `/health`. */
  healthPath?: string | false;
  /**
   * Resolves while the service can do its work, rejects with the reason when it cannot (e.g.
   * its database cannot write); the health probe then answers 503
   * `{"status":"unavailable","reason":…}`. Default: always healthy.
   */
  checkHealth?: () => Promise<void>;
  /** Path of the Prometheus scrape, served when `metrics` is given; `false` serves none. Default `/metrics`. */
  metricsPath?: string | false;
}

/**
 * Handles one HTTP request if it is for the JSON-RPC endpoint, the health probe or the metrics,
 * and resolves true; resolves false, touching nothing, for any other path so a host server can
 * route it.
 */
export type JsonRpcRequestListener = (
  request: IncomingMessage,
  response: ServerResponse,
) => Promise<boolean>;

/** Read the body up to `limit` bytes; undefined when it is larger. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      request.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    request.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        request.removeAllListeners("data");
        request.resume();
        resolve(undefined);
      } else {
        chunks.push(chunk);
      }
    });
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** Over HTTP there is no channel to push notifications on: the subscription methods say where to go. */
const webSocketOnly =
  (method: string): RpcMethod =>
  async () => {
    throw new BundlerError(
      RpcErrorCode.methodNotFound,
      `${method} is only available over WebSocket: connect with ws:// to the same URL`,
      { method },
    );
  };

/** The JSON-RPC endpoint as a Node request listener, to run alone or mount next to other routes. */
export function createJsonRpcRequestListener(options: JsonRpcHttpOptions): JsonRpcRequestListener {
  const endpoint = resolveEndpoint(options);
  const { basePath, maxBodyBytes } = endpoint;
  const handler = endpoint.handler("http", {
    eth_subscribe: webSocketOnly("eth_subscribe"),
    eth_unsubscribe: webSocketOnly("eth_unsubscribe"),
  });
  const healthPath =
    options.healthPath === false ? undefined : normalizePath(options.healthPath ?? "/health");
  const metrics = options.metricsPath === false ? undefined : options.metrics;
  const metricsPath = normalizePath(options.metricsPath || "/metrics");

  return async (request, response) => {
    const path = normalizePath(request.url ?? "/");
    if (path === healthPath && request.method === "GET") {
      const fault = await options.checkHealth?.().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      if (fault === undefined) sendJson(response, 200, { status: "ok" });
      else sendJson(response, 503, { status: "unavailable", reason: fault });
      return true;
    }
    if (metrics && path === metricsPath && request.method === "GET") {
      await sendMetrics(response, metrics.registry);
      return true;
    }
    if (path !== basePath) return false;
    if (request.method !== "POST") {
      sendJson(
        response,
        405,
        rpcError(RpcErrorCode.invalidRequest, `use POST for JSON-RPC at ${basePath || "/"}`),
        { allow: "POST" },
      );
      return true;
    }
    const body = await readBody(request, maxBodyBytes).catch(() => undefined);
    if (!body) {
      sendJson(
        response,
        413,
        rpcError(
          RpcErrorCode.invalidRequest,
          `request body exceeds the limit of ${maxBodyBytes} bytes`,
        ),
      );
      return true;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch (error) {
      sendJson(response, 200, handler.parseError((error as Error).message));
      return true;
    }
    const answer = await handler.handle(parsed, { url: request.url, headers: request.headers });
    if (answer === undefined) response.writeHead(204).end();
    else sendJson(response, 200, answer);
    return true;
  };
}
