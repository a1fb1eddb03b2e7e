import { type Bundler, createRpcHandler, type RpcHandler, type RpcHandlerOptions, type RpcMethod } from "@bundlekit/core";
import type { JsonRpcMetrics, RpcTransportKind } from "./metrics.ts";

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
}

/** The resolved endpoint: its path, its limits and its handler. */
export interface Endpoint {
  basePath: string;
  maxBodyBytes: number;
  /** Whether a request URL (query ignored, trailing `/` optional) is the endpoint's path. */
  matches(url: string | undefined): boolean;
  /** The handler of the method table plus `methods`, its requests counted in the metrics as `transport`. */
  handler(transport: RpcTransportKind, methods: Record<string, RpcMethod>): RpcHandler;
}

/** `/a/b/` and `/a/b` are one path; `/` is the empty string. */
export const normalizePath = (path: string) => path.split("?")[0]!.replace(/\/+$/, "");

export function resolveEndpoint(options: JsonRpcEndpointOptions): Endpoint {
  const basePath = normalizePath(options.basePath ?? "/");
  const rpc = options.rpc ?? {};
  const metrics = options.metrics;
  return {
    basePath,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    matches: (url) => normalizePath(url ?? "/") === basePath,
    handler(transport, extra) {
      return createRpcHandler(options.bundler, {
        ...rpc,
        methods: { ...rpc.methods, ...extra },
        observe: metrics && ((method, code, seconds) => metrics.observeRequest(transport, method, code, seconds)),
      });
    },
  };
}
