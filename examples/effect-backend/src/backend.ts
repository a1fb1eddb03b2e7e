import { createServer } from "node:http";
import { Bundler, BundlerApi, BundlerApiHandlers, JsonRpcServer } from "@bundlekit/effect";
import { NodeHttpServer } from "@effect/platform-node";
import { Effect, Layer } from "effect";
import { HttpRouter, HttpServerResponse } from "effect/http";
import { HttpApiBuilder } from "effect/http-api";
import { isHash } from "viem";

/** Where the bundler's JSON-RPC endpoint lives inside this backend. */
export const bundlerPath = "/bundler";

/** The backend's own route: nothing to do with the bundler. */
const hello = HttpRouter.add("GET", "/hello", HttpServerResponse.jsonUnsafe({ hello: "world" }));

/**
 * A route of the backend's own that uses the `Bundler` service directly: where an operation is,
 * in the backend's words. The engine's tagged errors become a 502 with their wire code.
 */
const operationStatus = HttpRouter.add(
  "GET",
  "/operations/:hash",
  Effect.gen(function* () {
    const { hash } = yield* HttpRouter.params;
    if (!hash || !isHash(hash)) return HttpServerResponse.jsonUnsafe({ error: "expected a 32-byte 0x-prefixed operation hash" }, { status: 400 });
    const bundler = yield* Bundler;
    const receipt = yield* bundler.getUserOperationReceipt(hash);
    if (receipt) {
      return HttpServerResponse.jsonUnsafe({ hash, status: receipt.success ? "included" : "reverted", transactionHash: receipt.receipt.transactionHash });
    }
    const lookup = yield* bundler.getUserOperationByHash(hash);
    if (!lookup) return HttpServerResponse.jsonUnsafe({ hash, error: "unknown operation" }, { status: 404 });
    return HttpServerResponse.jsonUnsafe({ hash, status: "pending" });
  }).pipe(Effect.catch((error) => Effect.succeed(HttpServerResponse.jsonUnsafe({ error: error.message, code: error.code }, { status: 502 })))),
);

/**
 * The bundler's JSON-RPC endpoint (ERC-4337 and ERC-7769 methods, batches) mounted at
 * `bundlerPath` over HTTP and WebSocket (`eth_subscribe` to `userOperationStatus`), with the
 * transport's body limit, checks, health probe (`/bundler/health`) and metrics when given.
 */
const jsonRpc = JsonRpcServer.layer({ basePath: bundlerPath });

/** `eth_sendUserOperation` as an `HttpApi` endpoint built from the package's schemas: `POST /eth_sendUserOperation`. */
const api = HttpApiBuilder.layer(BundlerApi).pipe(Layer.provide(BundlerApiHandlers));

/** The backend's routes: its own, the bundler's endpoint, its `HttpApi` group, and one on the `Bundler` service. */
export const routes = Layer.mergeAll(hello, jsonRpc, api, operationStatus);

/**
 * The backend as a layer: the routes served by Node's HTTP server on `port` (0: a free one), which
 * it also provides (`HttpServer`, for its address). Needs `Bundler`; its scope owns the
 * server, and closing the scope stops accepting.
 */
export const backendLayer = (options: { port?: number; host?: string } = {}) =>
  HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: options.port ?? 0, host: options.host ?? "127.0.0.1" })),
  );
