// @bundlekit/transport-jsonrpc: the engine's JSON-RPC over HTTP and WebSocket, with status
// subscriptions and Prometheus metrics; a server of its own, or mounted in yours. Named exports only.

// A server of its own.
export { type JsonRpcServer, type JsonRpcServerOptions, startJsonRpcServer } from "./server.ts";
export {
  type MetricsServer,
  type MetricsServerOptions,
  startMetricsServer,
} from "./metrics-server.ts";

// Mounted in a host server: plain Node, Express, Fastify, or anything fetch-based (Hono, Bun, Deno).
export {
  createJsonRpcRequestListener,
  type JsonRpcHttpOptions,
  type JsonRpcRequestListener,
} from "./http.ts";
export type { NodeRequest } from "./request-body.ts";
export {
  createJsonRpcExpress,
  type ExpressErrorMiddleware,
  type ExpressMiddleware,
  type ExpressNext,
  type JsonRpcExpress,
  type JsonRpcExpressOptions,
} from "./adapters/express.ts";
export { type FastifyInstanceLike, type JsonRpcFastifyOptions, jsonRpcFastifyPlugin } from "./adapters/fastify.ts";
export { createJsonRpcFetchHandler, type JsonRpcFetchHandler } from "./adapters/fetch.ts";
export { createJsonRpcUpgradeHandler, type JsonRpcUpgradeHandler } from "./websocket.ts";
export {
  createJsonRpcSocketEndpoint,
  type JsonRpcConnection,
  type JsonRpcSocketEndpoint,
  type JsonRpcWebSocketOptions,
  webSocketDefaults,
} from "./socket-endpoint.ts";
export { endpointDefaults, type JsonRpcEndpointOptions } from "./endpoint.ts";
export {
  type ConnectionLimitOptions,
  type ConnectionLimits,
  connectionLimitDefaults,
  limitConnections,
} from "./connection-limits.ts";

// Status subscriptions (`eth_subscribe`) over any framing.
export {
  createStatusSubscriptions,
  type NewSubscription,
  type StatusNotificationResult,
  type StatusSource,
  type StatusSubscriptions,
  type StatusSubscriptionsOptions,
  type SubscriptionNotification,
} from "./subscriptions.ts";

// Metrics.
export {
  createJsonRpcMetrics,
  type JsonRpcMetrics,
  type JsonRpcMetricsOptions,
  type RpcTransportKind,
} from "./metrics.ts";
