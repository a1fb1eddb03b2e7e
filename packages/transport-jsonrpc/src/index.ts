export * from "./adapters/express.ts";
export * from "./adapters/fastify.ts";
export * from "./adapters/fetch.ts";
export * from "./connection-limits.ts";
export { endpointDefaults, type JsonRpcEndpointOptions } from "./endpoint.ts";
export {
  createJsonRpcRequestListener,
  type JsonRpcHttpOptions,
  type JsonRpcRequestListener,
} from "./http.ts";
export * from "./metrics.ts";
export * from "./metrics-server.ts";
export type { NodeRequest } from "./request-body.ts";
export * from "./server.ts";
export * from "./subscriptions.ts";
export * from "./websocket.ts";
