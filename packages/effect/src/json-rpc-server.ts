import { RpcErrorCode } from "@bundlekit/core";
import {
  createJsonRpcFetchHandler,
  createJsonRpcSocketEndpoint,
  type JsonRpcHttpOptions,
  type JsonRpcWebSocketOptions,
} from "@bundlekit/transport-jsonrpc";
import { Effect, Layer } from "effect";
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http";
import { Bundler } from "./bundler.ts";
import { serveJsonRpcSocket } from "./json-rpc-socket.ts";

/**
 * The endpoint's options: those of `@bundlekit/transport-jsonrpc`'s HTTP and WebSocket endpoint,
 * the engine being the `Bundler` service's; `webSocket: false` serves HTTP alone.
 */
export type JsonRpcServerOptions = Omit<JsonRpcHttpOptions & JsonRpcWebSocketOptions, "bundler"> & { webSocket?: boolean };

const jsonRpcError = (status: number, code: number, message: string) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });

/** The route of `basePath` and what lies below it (health probe, metrics): the router's wildcard matches the path itself too. */
const routePath = (basePath: string): `/${string}` => {
  const base = basePath.split("?")[0]!.replace(/^\/+|\/+$/g, "");
  return base === "" ? "/*" : `/${base}/*`;
};

/**
 * The bundler's JSON-RPC endpoint (ERC-4337 and ERC-7769 methods, batches) over HTTP and
 * WebSocket, as routes of Effect's HTTP router, on the `Bundler` service's engine. An HTTP
 * request goes to `@bundlekit/transport-jsonrpc`'s fetch handler, so the envelope, body limit
 * (`maxBodyBytes`), content-type, `Host` and `Origin` checks, health probe and metrics are the
 * stand-alone server's. A WebSocket upgrade of `basePath` passes the same `Host` and `Origin`
 * checks and becomes a connection on Effect's socket (`request.upgrade`) with `eth_subscribe`
 * (`userOperationStatus`) and `eth_unsubscribe`. It answers `basePath` and what lies below it (a
 * health probe or scrape given from the root, e.g. `/health`, is served only when `basePath` is `/`).
 */
export const JsonRpcServer = {
  /** A layer adding the endpoint's routes to the program's `HttpRouter`; serve it with `HttpRouter.serve`. */
  layer: (options: JsonRpcServerOptions = {}) =>
    Layer.unwrap(
      Effect.gen(function* () {
        const bundler = yield* Bundler;
        const handle = createJsonRpcFetchHandler({ ...options, bundler: bundler.engine });
        const socket = createJsonRpcSocketEndpoint({ ...options, bundler: bundler.engine });
        const upgrade = (request: HttpServerRequest.HttpServerRequest) => {
          const refusal = socket.refuse(request.headers);
          if (refusal) return Effect.succeed(jsonRpcError(refusal.status, RpcErrorCode.invalidRequest, refusal.message));
          return serveJsonRpcSocket(socket, request).pipe(Effect.as(HttpServerResponse.empty()));
        };
        const isUpgrade = (request: HttpServerRequest.HttpServerRequest) =>
          options.webSocket !== false && request.headers.upgrade?.toLowerCase() === "websocket" && socket.matches(request.url);
        const route = (request: HttpServerRequest.HttpServerRequest) =>
          isUpgrade(request) ? upgrade(request) : HttpServerRequest.toWeb(request).pipe(
            Effect.flatMap((web) => Effect.promise(() => handle(web))),
            Effect.map(HttpServerResponse.fromWeb),
            // A request Effect cannot turn into a fetch `Request` (a malformed URL): JSON-RPC's invalid request.
            Effect.catch((error) => Effect.succeed(jsonRpcError(400, RpcErrorCode.invalidRequest, error.message))),
          );
        return HttpRouter.add("*", routePath(options.basePath ?? "/"), route);
      }),
    ),
};
