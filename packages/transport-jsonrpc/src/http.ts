import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { BundlerError, RpcErrorCode, type RpcMethod } from "@bundlekit/core";
import {
  corsHeaders,
  isJsonContentType,
  jsonContentTypes,
  preflightHeaders,
} from "./browser-guard.ts";
import { type JsonRpcEndpointOptions, normalizePath, resolveEndpoint } from "./endpoint.ts";
import { createInFlightLimit, type InFlightLimit } from "./in-flight-limit.ts";
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

/**
 * The in-flight limit of each connection, paused by stopping the socket. Node's HTTP server
 * resumes a socket when it reads a body; while the limit holds it, the socket is paused again
 * at once (Node pauses its own sockets the same way).
 */
function limitOf(
  socket: Socket,
  max: number,
  limits: WeakMap<Socket, InFlightLimit>,
): InFlightLimit {
  let limit = limits.get(socket);
  if (limit) return limit;
  let held = false;
  socket.on("resume", () => {
    if (held) socket.pause();
  });
  limit = createInFlightLimit(max, {
    pause() {
      held = true;
      socket.pause();
    },
    resume() {
      held = false;
      socket.resume();
    },
  });
  limits.set(socket, limit);
  return limit;
}

/** Resolves once the answer is sent (or its connection gone): until then it counts as in flight. */
const sent = (response: ServerResponse) =>
  new Promise<void>((resolve) => {
    if (response.writableFinished || response.destroyed) resolve();
    else response.once("close", resolve);
  });

/** The JSON-RPC endpoint as a Node request listener, to run alone or mount next to other routes. */
export function createJsonRpcRequestListener(options: JsonRpcHttpOptions): JsonRpcRequestListener {
  const endpoint = resolveEndpoint(options);
  const { basePath, maxBodyBytes, allowedOrigins, maxInFlightRequests, maxUnsentBytes } = endpoint;
  const handler = endpoint.handler("http", {
    eth_subscribe: webSocketOnly("eth_subscribe"),
    eth_unsubscribe: webSocketOnly("eth_unsubscribe"),
  });
  const healthPath =
    options.healthPath === false ? undefined : normalizePath(options.healthPath ?? "/health");
  const metrics = options.metricsPath === false ? undefined : options.metrics;
  const metricsPath = normalizePath(options.metricsPath || "/metrics");
  const limits = new WeakMap<Socket, InFlightLimit>();

  /** Parse and answer one body, unless the client has left too many answers unread (then close the connection). */
  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
    cors: Record<string, string>,
  ) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch (error) {
      sendJson(response, 200, handler.parseError((error as Error).message), cors);
      return;
    }
    const reply = await handler.handle(parsed, { url: request.url, headers: request.headers });
    if (request.socket.writableLength > maxUnsentBytes) {
      request.socket.destroy();
      return;
    }
    if (reply === undefined) response.writeHead(204, cors).end();
    else sendJson(response, 200, reply, cors);
  }

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
    const isMetrics = metrics && path === metricsPath && request.method === "GET";
    if (!isMetrics && path !== basePath) return false;
    const refusal = endpoint.refuse(request.headers);
    if (refusal) {
      sendJson(response, refusal.status, rpcError(RpcErrorCode.invalidRequest, refusal.message));
      return true;
    }
    if (isMetrics) {
      await sendMetrics(response, metrics.registry);
      return true;
    }
    const { origin } = request.headers;
    if (request.method === "OPTIONS" && origin !== undefined) {
      response.writeHead(204, preflightHeaders(request.headers, allowedOrigins)).end();
      return true;
    }
    const cors = corsHeaders(origin, allowedOrigins);
    if (request.method !== "POST") {
      sendJson(
        response,
        405,
        rpcError(RpcErrorCode.invalidRequest, `use POST for JSON-RPC at ${basePath || "/"}`),
        { ...cors, allow: "POST" },
      );
      return true;
    }
    const contentType = request.headers["content-type"];
    if (!isJsonContentType(contentType)) {
      const got =
        contentType === undefined
          ? "no content-type given"
          : `unsupported content-type "${contentType.slice(0, 100)}"`;
      sendJson(
        response,
        415,
        rpcError(RpcErrorCode.invalidRequest, `${got}; send the body as ${jsonContentTypes[0]}`),
        { ...cors, accept: jsonContentTypes.join(", ") },
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
        cors,
      );
      return true;
    }
    limitOf(request.socket, maxInFlightRequests, limits).run(async () => {
      await answer(request, response, body, cors).catch(() => {
        if (!response.headersSent)
          sendJson(response, 500, rpcError(RpcErrorCode.internalError, "internal error"));
      });
      await sent(response);
    });
    return true;
  };
}
