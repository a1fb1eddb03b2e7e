import type { Server, ServerResponse } from "node:http";
import { createNodeHttpHandler } from "../http.ts";
import type { JsonRpcHttpOptions, RequestBody } from "../http-endpoint.ts";
import type { NodeRequest } from "../request-body.ts";
import type { JsonRpcWebSocketOptions } from "../socket-endpoint.ts";
import { createJsonRpcUpgradeHandler } from "../websocket.ts";

/** Express's `next`. */
export type ExpressNext = (error?: unknown) => void;

/** An Express middleware, typed structurally: the transport does not depend on Express. */
export type ExpressMiddleware = (
  request: NodeRequest,
  response: ServerResponse,
  next: ExpressNext,
) => void;

/** An Express error middleware (four parameters), typed structurally. */
export type ExpressErrorMiddleware = (
  error: unknown,
  request: NodeRequest,
  response: ServerResponse,
  next: ExpressNext,
) => void;

export interface JsonRpcExpressOptions extends JsonRpcHttpOptions, JsonRpcWebSocketOptions {}

/** The endpoint in an Express app: HTTP as middleware, WebSocket on the app's server. */
export interface JsonRpcExpress {
  /**
   * `app.use(rpc.middleware)`: answers the endpoint's paths and passes every other request on.
   * `express.json()` may run before it (its parsed body is used) or after it; its parse and size
   * errors on the endpoint's paths become JSON-RPC answers (-32700, 413).
   */
  middleware: [ExpressMiddleware, ExpressErrorMiddleware];
  /** Serve WebSocket on `basePath` from the server `app.listen()` returned. */
  attach(server: Server): void;
  /** Close the WebSocket connections (code 1001), ending their subscriptions. */
  close(): Promise<void>;
}

/** What a body parser's failure (body-parser's `type`) means for the endpoint. */
function failedBody(error: unknown): RequestBody | undefined {
  const { type, body, limit } = (error ?? {}) as {
    type?: unknown;
    body?: unknown;
    limit?: unknown;
  };
  if (type === "entity.too.large") return { overLimit: Number(limit) };
  if (type === "entity.parse.failed" && typeof body === "string")
    return { bytes: Buffer.from(body, "utf8") };
  return undefined;
}

/**
 * The JSON-RPC endpoint for Express. `basePath` is the path clients use, whether the middleware
 * is mounted at the root (`app.use(rpc.middleware)`) or under it (`app.use("/bundler",
 * rpc.middleware)` with `basePath: "/bundler"`): paths are matched on `originalUrl`, which
 * Express leaves whole, as the WebSocket upgrade's URL is.
 */
export function createJsonRpcExpress(options: JsonRpcExpressOptions): JsonRpcExpress {
  const serve = createNodeHttpHandler(options);
  const upgrade = createJsonRpcUpgradeHandler(options);
  return {
    middleware: [
      (request, response, next) => {
        serve(request, response).then((served) => served || next(), next);
      },
      (error, request, response, next) => {
        const body = failedBody(error);
        if (!body) return next(error);
        serve(request, response, body).then((served) => served || next(error), next);
      },
    ],
    attach: (server) => upgrade.attach(server),
    close: () => upgrade.close(),
  };
}
