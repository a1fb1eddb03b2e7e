import { RpcErrorCode } from "@bundlekit/core";
import { createJsonRpcFetchHandler, type JsonRpcHttpOptions } from "@bundlekit/transport-jsonrpc";
import { Effect, Layer } from "effect";
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http";
import { Bundler } from "./bundler.ts";

/** The endpoint's options: those of `@bundlekit/transport-jsonrpc`'s HTTP endpoint, the engine being the `Bundler` service's. */
export type JsonRpcServerOptions = Omit<JsonRpcHttpOptions, "bundler">;

/** The route of `basePath` and what lies below it (health probe, metrics): the router's wildcard matches the path itself too. */
const routePath = (basePath: string): `/${string}` => {
  const base = basePath.split("?")[0]!.replace(/^\/+|\/+$/g, "");
  return base === "" ? "/*" : `/${base}/*`;
};

/**
 * The bundler's JSON-RPC endpoint (ERC-4337 and ERC-7769 methods, batches) as routes of Effect's
 * HTTP router. Each request goes to `@bundlekit/transport-jsonrpc`'s fetch handler on the
 * `Bundler` service's engine, so the envelope, body limit (`maxBodyBytes`), content-type, `Host`
 * and `Origin` checks, health probe and metrics are the stand-alone server's. It answers
 * `basePath` and what lies below it (a health probe or scrape given from the root, e.g.
 * `/health`, is served only when `basePath` is `/`). Subscriptions are WebSocket-only: over this
 * endpoint `eth_subscribe` says so.
 */
export const JsonRpcServer = {
  /** A layer adding the endpoint's routes to the program's `HttpRouter`; serve it with `HttpRouter.serve`. */
  layer: (options: JsonRpcServerOptions = {}) =>
    Layer.unwrap(
      Effect.gen(function* () {
        const bundler = yield* Bundler;
        const handle = createJsonRpcFetchHandler({ ...options, bundler: bundler.engine });
        const route = (request: HttpServerRequest.HttpServerRequest) =>
          HttpServerRequest.toWeb(request).pipe(
            Effect.flatMap((web) => Effect.promise(() => handle(web))),
            Effect.map(HttpServerResponse.fromWeb),
            // A request Effect cannot turn into a fetch `Request` (a malformed URL): JSON-RPC's invalid request.
            Effect.catch((error) =>
              Effect.succeed(
                HttpServerResponse.jsonUnsafe(
                  {
                    jsonrpc: "2.0",
                    id: null,
                    error: { code: RpcErrorCode.invalidRequest, message: error.message },
                  },
                  { status: 400 },
                ),
              ),
            ),
          );
        return HttpRouter.add("*", routePath(options.basePath ?? "/"), route);
      }),
    ),
};
