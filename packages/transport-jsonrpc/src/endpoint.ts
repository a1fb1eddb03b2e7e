import type { IncomingHttpHeaders } from "node:http";
import {
  type Bundler,
  createRpcHandler,
  type RpcHandler,
  type RpcHandlerOptions,
  type RpcMethod,
} from "@bundlekit/core";
import { defaultAllowedHosts, type Refusal, refuseBrowser } from "./browser-guard.ts";
import type { JsonRpcMetrics, RpcTransportKind } from "./metrics.ts";

/** The defaults of the endpoint's limits, for settings that start from them. */
export const endpointDefaults = {
  maxBodyBytes: 1024 * 1024,
  allowedHosts: defaultAllowedHosts,
  allowedOrigins: [] as readonly string[],
  maxInFlightRequests: 32,
  maxUnsentBytes: 1024 * 1024,
} as const;

/** What the HTTP and the WebSocket side of one JSON-RPC endpoint share. */
export interface JsonRpcEndpointOptions {
  /** The engine the methods run on. */
  bundler: Bundler;
  /** The method table's options (`maxBatchSize`, extra `methods`, `logger`); see `createRpcHandler`. */
  rpc?: RpcHandlerOptions;
  /** Path the endpoint answers at, e.g. `/v1/31337`; a trailing `/` is accepted too. Default `/`. */
  basePath?: string;
  /** Largest HTTP body or WebSocket message accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Count requests in these metrics (see `createJsonRpcMetrics`). Default: none. */
  metrics?: JsonRpcMetrics | undefined;
  /**
   * Host names served (the `Host` header, port ignored), as geth's `--http.vhosts`; IP literals
   * always pass, `*` lets any name in. Others get 403, which stops DNS rebinding.
   * Default `["localhost"]`.
   */
  allowedHosts?: readonly string[];
  /**
   * Browser origins (`https://app.example.org`) that may call the endpoint: CORS over HTTP,
   * `Origin` of a WebSocket upgrade; `*` allows every origin. A request that carries another
   * `Origin` gets 403; one without (not from a browser) passes. Default none: CORS off.
   */
  allowedOrigins?: readonly string[];
  /**
   * Requests (a body or message each, a batch counting once) one connection may have in flight;
   * past that, the connection's further requests wait and it is not read from. Default 32.
   */
  maxInFlightRequests?: number;
  /**
   * Bytes of answers a connection may leave unread: a client that lets more pile up is
   * disconnected before it is sent another. Default 1 MiB.
   */
  maxUnsentBytes?: number;
}

/** The resolved endpoint: its path, its limits and its handler. */
export interface Endpoint {
  basePath: string;
  maxBodyBytes: number;
  allowedOrigins: readonly string[];
  maxInFlightRequests: number;
  maxUnsentBytes: number;
  /** Why the Host or Origin of a request (or upgrade) is refused, or undefined when it is served. */
  refuse(headers: IncomingHttpHeaders): Refusal | undefined;
  /** Whether a request URL (query ignored, trailing `/` optional) is the endpoint's path. */
  matches(url: string | undefined): boolean;
  /** The handler of the method table plus `methods`, its requests counted in the metrics as `transport`. */
  handler(transport: RpcTransportKind, methods: Record<string, RpcMethod>): RpcHandler;
}

/** `/a/b/` and `/a/b` are one path; `/` is the empty string. */
export const normalizePath = (path: string) => path.split("?")[0]!.replace(/\/+$/, "");

const lowerCase = (names: readonly string[]) => names.map((name) => name.toLowerCase());

export function resolveEndpoint(options: JsonRpcEndpointOptions): Endpoint {
  const basePath = normalizePath(options.basePath ?? "/");
  const rpc = options.rpc ?? {};
  const metrics = options.metrics;
  const allowedHosts = lowerCase(options.allowedHosts ?? endpointDefaults.allowedHosts);
  const allowedOrigins = lowerCase(options.allowedOrigins ?? endpointDefaults.allowedOrigins);
  return {
    basePath,
    maxBodyBytes: options.maxBodyBytes ?? endpointDefaults.maxBodyBytes,
    allowedOrigins,
    maxInFlightRequests: options.maxInFlightRequests ?? endpointDefaults.maxInFlightRequests,
    maxUnsentBytes: options.maxUnsentBytes ?? endpointDefaults.maxUnsentBytes,
    refuse: (headers) => refuseBrowser(headers, allowedHosts, allowedOrigins),
    matches: (url) => normalizePath(url ?? "/") === basePath,
    handler(transport, extra) {
      return createRpcHandler(options.bundler, {
        ...rpc,
        methods: { ...rpc.methods, ...extra },
        observe:
          metrics &&
          ((method, code, seconds) => metrics.observeRequest(transport, method, code, seconds)),
      });
    },
  };
}
