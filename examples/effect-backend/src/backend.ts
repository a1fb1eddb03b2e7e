import { createServer } from "node:http";
import { createRpcHandler } from "@bundlekit/core";
import { Bundler } from "@bundlekit/effect";
import { NodeHttpServer } from "@effect/platform-node";
import { Effect, Layer } from "effect";
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http";
import { isHash } from "viem";

/** Where the bundler's JSON-RPC endpoint lives inside this backend. */
export const bundlerPath = "/bundler";

/** The backend's own route: nothing to do with the bundler. */
const hello = HttpRouter.add("GET", "/hello", HttpServerResponse.jsonUnsafe({ hello: "world" }));

/**
 * The bundler's JSON-RPC endpoint (ERC-4337 and ERC-7769 methods, batches) mounted as a route:
 * the body goes to the engine's JSON-RPC handler, which never fails; a body that is not JSON gets
 * JSON-RPC's parse error.
 */
const jsonRpc = HttpRouter.add(
  "POST",
  bundlerPath,
  Effect.gen(function* () {
    const bundler = yield* Bundler;
    const handler = createRpcHandler(bundler.engine);
    const text = yield* (yield* HttpServerRequest.HttpServerRequest).text;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return HttpServerResponse.jsonUnsafe(handler.parseError((error as Error).message));
    }
    const answer = yield* Effect.promise(() => handler.handle(body));
    return answer === undefined ? HttpServerResponse.empty({ status: 204 }) : HttpServerResponse.jsonUnsafe(answer);
  }),
);

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

/** The backend's routes: its own, the bundler's endpoint, and one on the `Bundler` service. */
export const routes = Layer.mergeAll(hello, jsonRpc, operationStatus);

/**
 * The backend as a layer: the routes served by Node's HTTP server on `port` (0: a free one), which
 * it also provides (`HttpServer`, for its address). Needs `Bundler`; its scope owns the
 * server, and closing the scope stops accepting.
 */
export const backendLayer = (options: { port?: number; host?: string } = {}) =>
  HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: options.port ?? 0, host: options.host ?? "127.0.0.1" })),
  );
