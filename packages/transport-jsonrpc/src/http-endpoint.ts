import type { IncomingHttpHeaders } from "node:http";
import { RpcError, RpcErrorCode, type RpcMethod, type RpcRequestContext } from "@bundlekit/core";
import {
  corsHeaders,
  isJsonContentType,
  jsonContentTypes,
  preflightHeaders,
} from "./browser-guard.ts";
import { type JsonRpcEndpointOptions, normalizePath, resolveEndpoint } from "./endpoint.ts";
import { busyHeaders, busyRetryAfter, busyStatus, jsonAnswer, rpcError } from "./respond.ts";

export interface JsonRpcHttpOptions extends JsonRpcEndpointOptions {
  /**
   * Path of the health probe (`GET` answers `{"status":"ok"}`): relative to `basePath` (e.g.
   * `health`, served at `<basePath>/health`), or from the server's root when it starts with `/`;
   * `false` serves none. Default `health` (`startJsonRpcServer`, which owns its server: `/health`).
   */
  healthPath?: string | false;
  /**
   * Resolves while the service can do its work, rejects with the reason when it cannot (e.g.
   * its database cannot write); the health probe then answers 503
   * `{"status":"unavailable","reason":…}`. Default: always healthy.
   */
  checkHealth?: () => Promise<void>;
  /**
   * Path of the Prometheus scrape, served when `metrics` is given; relative to `basePath` or
   * from the root as `healthPath`; `false` serves none. Default `metrics`
   * (`startJsonRpcServer`: `/metrics`).
   */
  metricsPath?: string | false;
}

/** An HTTP answer, whatever writes it: a Node response, a fetch `Response`. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A request body as it reaches the endpoint: bytes still to parse, a value a framework parsed
 * already (e.g. `express.json()`), over a limit (`maxBodyBytes`, or a smaller one of a
 * framework's parser), or read by another handler and not kept.
 */
export type RequestBody =
  | { bytes: Uint8Array }
  | { parsed: unknown; length: number }
  | { overLimit: number }
  | "not kept";

/** A request's method, URL (path and query, as the client sent it) and headers (names in lower case). */
export interface HttpRequestHead {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** The HTTP side of the endpoint, apart from how bytes arrive and leave. */
export interface HttpEndpoint {
  maxBodyBytes: number;
  maxInFlightRequests: number;
  maxUnsentBytes: number;
  /** The paths answered: the endpoint's, then the health probe's and the metrics' when served. */
  paths: string[];
  /**
   * What to do with a request: undefined when its path is not served (the host routes it); an
   * answer to send (health, metrics, refusals); or the CORS headers of a JSON-RPC call whose
   * body is to be read and passed to `call`.
   */
  screen(head: HttpRequestHead): Promise<HttpAnswer | { call: Record<string, string> } | undefined>;
  /** The answer to a JSON-RPC call's body. */
  call(
    body: RequestBody,
    request: RpcRequestContext,
    cors: Record<string, string>,
  ): Promise<HttpAnswer>;
}

/** Over HTTP there is no channel to push notifications on: the subscription methods say where to go. */
const webSocketOnly =
  (method: string): RpcMethod =>
  async () => {
    throw new RpcError(
      RpcErrorCode.methodNotFound,
      `${method} is only available over WebSocket: connect with ws:// to the same URL`,
      { method },
    );
  };

/** A path below `basePath` when relative, from the root when it starts with `/`; undefined for `false`. */
function subPath(basePath: string, path: string | false): string | undefined {
  if (path === false) return undefined;
  return path.startsWith("/") ? normalizePath(path) : normalizePath(`${basePath}/${path}`);
}

const utf8 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");

const bodyFault = (status: number, message: string, cors: Record<string, string>) =>
  jsonAnswer(status, rpcError(RpcErrorCode.invalidRequest, message), cors);

/** The JSON-RPC endpoint over HTTP, with its health probe and metrics, for any HTTP front end. */
export function createHttpEndpoint(options: JsonRpcHttpOptions): HttpEndpoint {
  const endpoint = resolveEndpoint(options);
  const { basePath, maxBodyBytes, allowedOrigins } = endpoint;
  const handler = endpoint.handler("http", {
    eth_subscribe: webSocketOnly("eth_subscribe"),
    eth_unsubscribe: webSocketOnly("eth_unsubscribe"),
  });
  const healthPath = subPath(basePath, options.healthPath ?? "health");
  const metrics = options.metricsPath === false ? undefined : options.metrics;
  const metricsPath = metrics && subPath(basePath, options.metricsPath ?? "metrics");
  const paths = [basePath, healthPath, metricsPath].filter((p): p is string => p !== undefined);

  async function health(): Promise<HttpAnswer> {
    const fault = await options.checkHealth?.().then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    return fault === undefined
      ? jsonAnswer(200, { status: "ok" })
      : jsonAnswer(503, { status: "unavailable", reason: fault });
  }

  return {
    maxBodyBytes,
    maxInFlightRequests: endpoint.maxInFlightRequests,
    maxUnsentBytes: endpoint.maxUnsentBytes,
    paths: paths.map((path) => path || "/"),

    async screen({ method, url, headers }) {
      const path = normalizePath(url);
      if (path === healthPath && method === "GET") return health();
      const isMetrics = metrics && path === metricsPath && method === "GET";
      if (!isMetrics && path !== basePath) return undefined;
      const refusal = endpoint.refuse(headers);
      if (refusal) return bodyFault(refusal.status, refusal.message, {});
      if (isMetrics) {
        const text = await metrics.registry.metrics();
        return {
          status: 200,
          headers: { "content-type": metrics.registry.contentType },
          body: text,
        };
      }
      const { origin } = headers;
      if (method === "OPTIONS" && origin !== undefined)
        return { status: 204, headers: preflightHeaders(headers, allowedOrigins) };
      const cors = corsHeaders(origin, allowedOrigins);
      if (method !== "POST")
        return bodyFault(405, `use POST for JSON-RPC at ${basePath || "/"}`, {
          ...cors,
          allow: "POST",
        });
      const contentType = headers["content-type"];
      if (!isJsonContentType(contentType)) {
        const got =
          contentType === undefined
            ? "no content-type given"
            : `unsupported content-type "${contentType.slice(0, 100)}"`;
        return bodyFault(415, `${got}; send the body as ${jsonContentTypes[0]}`, {
          ...cors,
          accept: jsonContentTypes.join(", "),
        });
      }
      return { call: cors };
    },

    async call(body, request, cors) {
      if (body === "not kept")
        return bodyFault(
          400,
          "the request body was read before the JSON-RPC endpoint and not kept (on request.body); mount the endpoint before the middleware that reads it",
          cors,
        );
      const tooLarge = (limit: number) =>
        bodyFault(413, `request body exceeds the limit of ${limit} bytes`, cors);
      if ("overLimit" in body) return tooLarge(body.overLimit);
      if (("bytes" in body ? body.bytes.length : body.length) > maxBodyBytes)
        return tooLarge(maxBodyBytes);
      let parsed: unknown;
      if ("parsed" in body) parsed = body.parsed;
      else
        try {
          parsed = JSON.parse(utf8(body.bytes));
        } catch (error) {
          return jsonAnswer(200, handler.parseError((error as Error).message), cors);
        }
      const reply = await handler.handle(parsed, request);
      if (reply === undefined) return { status: 204, headers: cors };
      const retryAfter = busyRetryAfter(reply);
      return retryAfter === undefined
        ? jsonAnswer(200, reply, cors)
        : jsonAnswer(busyStatus, reply, busyHeaders(cors, retryAfter));
    },
  };
}
