import { RpcErrorCode } from "@bundlekit/core";
import { Effect, Layer, Schema, SchemaIssue } from "effect";
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware } from "effect/http-api";
import { Bundler } from "./bundler.ts";
import type { BundlekitError } from "./errors.ts";
import {
  ChainIdRequest,
  ChainIdResponse,
  EstimateUserOperationGasRequest,
  EstimateUserOperationGasResponse,
  GetUserOperationByHashRequest,
  GetUserOperationByHashResponse,
  GetUserOperationReceiptRequest,
  GetUserOperationReceiptResponse,
  RequestId,
  SendUserOperationRequest,
  SendUserOperationResponse,
  SupportedEntryPointsRequest,
  SupportedEntryPointsResponse,
} from "./rpc-schemas.ts";

/** A JSON-RPC error answer's fields: `{ jsonrpc, id, error: { code, message, data? } }`. */
const errorAnswer = {
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(RequestId),
  error: Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optionalKey(Schema.Unknown) }),
};

/**
 * A JSON-RPC error answer with status 400: a refusal of the engine (its ERC-7769 code, message
 * and data), or a request the schemas refuse (-32602 for its params, -32600 for the rest of the
 * envelope, the message naming the field).
 */
export class JsonRpcErrorResponse extends Schema.Error<JsonRpcErrorResponse>("JsonRpcErrorResponse")(errorAnswer, { httpApiStatus: 400 }) {
  /** The answer to request `id` failing with a tagged error of the engine, with the status its kind takes. */
  static of(
    id: string | number | null,
    error: BundlekitError,
  ): JsonRpcErrorResponse | JsonRpcBusyResponse | JsonRpcUnavailableResponse | JsonRpcInternalErrorResponse {
    const { code, message, data } = error;
    const answer = { jsonrpc: "2.0" as const, id, error: data === undefined ? { code, message } : { code, message, data } };
    if (error._tag === "InternalError") return new JsonRpcInternalErrorResponse(answer);
    if (error._tag === "Busy") return new JsonRpcBusyResponse(answer);
    if (error._tag === "ShuttingDown") return new JsonRpcUnavailableResponse(answer);
    return new JsonRpcErrorResponse(answer);
  }
}

/**
 * A JSON-RPC error answer with status 429: the engine is busy (-32005); retry after
 * `error.data.retryAfter` seconds. 429 as the stand-alone transport answers it: clients back off
 * on it, and load balancers do not take the instance for a failing one (see docs/api.md).
 */
export class JsonRpcBusyResponse extends Schema.Error<JsonRpcBusyResponse>("JsonRpcBusyResponse")(errorAnswer, { httpApiStatus: 429 }) {}

/** A JSON-RPC error answer with status 503: the engine is shutting down (-32603); retry elsewhere. */
export class JsonRpcUnavailableResponse extends Schema.Error<JsonRpcUnavailableResponse>("JsonRpcUnavailableResponse")(errorAnswer, { httpApiStatus: 503 }) {}

/** A JSON-RPC error answer with status 500: the node, the store or the engine failed (`InternalError`, -32603). */
export class JsonRpcInternalErrorResponse extends Schema.Error<JsonRpcInternalErrorResponse>("JsonRpcInternalErrorResponse")(errorAnswer, { httpApiStatus: 500 }) {}

/** The first issue of a refused request, as a JSON-RPC error naming the field (`params[0].nonce`). */
function schemaRefusal(issue: SchemaIssue.Issue): JsonRpcErrorResponse {
  const [first] = SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues;
  const keys = (first?.path ?? []).map((segment) => (typeof segment === "object" ? segment.key : segment));
  const path = keys.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("").replace(/^\./, "");
  const detail = first?.message ?? "invalid request";
  // Core's codec names the field in its message already (`invalid params[0].nonce: is required`).
  const message = path === "" || detail.includes(path) ? detail : `${path}: ${detail}`;
  const code = path.startsWith("params") ? RpcErrorCode.invalidParams : RpcErrorCode.invalidRequest;
  return new JsonRpcErrorResponse({ jsonrpc: "2.0", id: null, error: { code, message } });
}

/** Turns a request body the schemas refuse into a `JsonRpcErrorResponse` naming the field, instead of `HttpApi`'s empty 400. */
export class JsonRpcRequestErrors extends HttpApiMiddleware.Service<JsonRpcRequestErrors>()("@bundlekit/JsonRpcRequestErrors", {
  error: JsonRpcErrorResponse,
}) {
  static layer = HttpApiMiddleware.layerSchemaErrorTransform(JsonRpcRequestErrors, (error) => Effect.fail(schemaRefusal(error.cause.issue)));
}

const endpoint = <const Name extends string, const Method extends string, Payload extends Schema.Top, Success extends Schema.Top>(
  name: Name,
  method: Method,
  payload: Payload,
  success: Success,
) =>
  HttpApiEndpoint.post(name, `/${method}`, {
    payload,
    success,
    error: [JsonRpcErrorResponse, JsonRpcBusyResponse, JsonRpcUnavailableResponse, JsonRpcInternalErrorResponse],
  });

/**
 * An `HttpApi` group built from the package's schemas: an endpoint per ERC-4337 method,
 * `POST /<method>` (`/eth_sendUserOperation`, `/eth_estimateUserOperationGas`,
 * `/eth_getUserOperationByHash`, `/eth_getUserOperationReceipt`, `/eth_supportedEntryPoints`,
 * `/eth_chainId`), each taking the method's JSON-RPC request and answering its JSON-RPC result;
 * errors are JSON-RPC error answers (`JsonRpcErrorResponse`, 400; `JsonRpcBusyResponse`, 429;
 * `JsonRpcUnavailableResponse`, 503; `JsonRpcInternalErrorResponse`, 500). `HttpApi` routes by path and
 * method, not by a body's `method`, hence an endpoint per method rather than JSON-RPC's single
 * endpoint (which is `JsonRpcServer.layer`).
 */
export const BundlerApiGroup = HttpApiGroup.make("bundler")
  .add(endpoint("sendUserOperation", "eth_sendUserOperation", SendUserOperationRequest, SendUserOperationResponse))
  .add(endpoint("estimateUserOperationGas", "eth_estimateUserOperationGas", EstimateUserOperationGasRequest, EstimateUserOperationGasResponse))
  .add(endpoint("getUserOperationByHash", "eth_getUserOperationByHash", GetUserOperationByHashRequest, GetUserOperationByHashResponse))
  .add(endpoint("getUserOperationReceipt", "eth_getUserOperationReceipt", GetUserOperationReceiptRequest, GetUserOperationReceiptResponse))
  .add(endpoint("supportedEntryPoints", "eth_supportedEntryPoints", SupportedEntryPointsRequest, SupportedEntryPointsResponse))
  .add(endpoint("chainId", "eth_chainId", ChainIdRequest, ChainIdResponse))
  .middleware(JsonRpcRequestErrors);

/** An `HttpApi` holding `BundlerApiGroup` alone; add the group to an API of your own instead to serve it beside your endpoints. */
export const BundlerApi = HttpApi.make("bundlekit").add(BundlerApiGroup);

/** The JSON-RPC answer to request `id`; an engine refusal as its JSON-RPC error answer. */
const answer = <A, R>(id: string | number, result: Effect.Effect<A, BundlekitError, R>) =>
  result.pipe(
    Effect.map((value) => ({ jsonrpc: "2.0" as const, id, result: value })),
    Effect.mapError((error) => JsonRpcErrorResponse.of(id, error)),
  );

/** The handlers of `BundlerApiGroup` in `BundlerApi`, on the `Bundler` service, with `JsonRpcRequestErrors`. */
export const BundlerApiHandlers = HttpApiBuilder.group(BundlerApi, "bundler", (handlers) =>
  Effect.gen(function* () {
    const bundler = yield* Bundler;
    return handlers
      .handle("sendUserOperation", ({ payload: { id, params } }) => answer(id, bundler.sendUserOperation(params[0], params[1])))
      .handle("estimateUserOperationGas", ({ payload: { id, params } }) => answer(id, bundler.estimateUserOperationGas(params[0], params[1])))
      .handle("getUserOperationByHash", ({ payload: { id, params } }) => answer(id, Effect.map(bundler.getUserOperationByHash(params[0]), (lookup) => lookup ?? null)))
      .handle("getUserOperationReceipt", ({ payload: { id, params } }) => answer(id, Effect.map(bundler.getUserOperationReceipt(params[0]), (receipt) => receipt ?? null)))
      .handle("supportedEntryPoints", ({ payload: { id } }) => answer(id, Effect.succeed(bundler.engine.entryPoints.all.map((entryPoint) => entryPoint.address))))
      .handle("chainId", ({ payload: { id } }) => answer(id, Effect.succeed(BigInt(bundler.engine.chainId))));
  }),
).pipe(Layer.provide(JsonRpcRequestErrors.layer));
