import type { Bundler } from "../engine/create-bundler.ts";
import { type Logger, silentLogger } from "../ports/logger.ts";
import { redactingLogger } from "../redaction/redacting-logger.ts";
import { createRedactor, type Redactor } from "../redaction/redactor.ts";
import { type RpcMethod, type RpcRequestContext, rpcMethods } from "./methods.ts";
import type { RequestDrain } from "./request-drain.ts";
import { RpcErrorCode, rpcErrorOf } from "./rpc-errors.ts";

export type JsonRpcId = string | number | null;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: "2.0"; id: JsonRpcId; result: unknown }
  | { jsonrpc: "2.0"; id: JsonRpcId; error: JsonRpcError };

export interface RpcHandlerOptions {
  /** Most requests one batch may hold. Default 100. */
  maxBatchSize?: number;
  /** Extra or replacement methods (e.g. debug methods when enabled). */
  methods?: Record<string, RpcMethod>;
  /**
   * Serve the standard ERC-4337 methods and the service's own beside `methods`. Default true;
   * false serves `methods` alone (e.g. a listener of the builder API only).
   */
  standardMethods?: boolean;
  logger?: Logger;
  /**
   * Applied to every error answer (message and data) and to the handler's log lines, so no node
   * URL, key or password reaches a caller or a log. Default: URLs cut to scheme, host and port;
   * give `createRedactor(secrets)` to hide known secrets too.
   */
  redactor?: Redactor;
  /**
   * Called once per request (each item of a batch) when it is answered, for metrics. `method` is
   * bounded: a served method's name, `unknown` for any other name, `invalid` for a body that is
   * no request. `code` is the error code, undefined on success.
   */
  observe?: (method: string, code: number | undefined, seconds: number) => void;
  /** Runs every method call, so a shutdown can end them within a grace period (`createRequestDrain`). Default: none. */
  drain?: RequestDrain;
}

/** Handles parsed JSON-RPC bodies; transports only frame bytes around it. */
export interface RpcHandler {
  /**
   * Answer one parsed body: a request, or a batch array. Resolves with the response (an array
   * for a batch), or undefined when nothing is owed (only notifications). Never rejects.
   * `request` (the URL and headers it came with) is passed to every method of the body.
   */
  handle(body: unknown, request?: RpcRequestContext): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined>;
  /** The response to a body that was not valid JSON. */
  parseError(detail: string): JsonRpcResponse;
}

const errorResponse = (id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

/** An explicit `null` counts as absent, so trailing `null` parameters are as if not sent. */
function withoutTrailingNulls(params: readonly unknown[]): readonly unknown[] {
  let end = params.length;
  while (end > 0 && params[end - 1] === null) end--;
  return end === params.length ? params : params.slice(0, end);
}

/** The JSON-RPC 2.0 envelope around the engine: validation of requests, batches and error mapping. */
export function createRpcHandler(bundler: Bundler, options: RpcHandlerOptions = {}): RpcHandler {
  const methods: Record<string, RpcMethod> = { ...(options.standardMethods === false ? {} : rpcMethods), ...options.methods };
  const maxBatchSize = options.maxBatchSize ?? 100;
  const redactor = options.redactor ?? createRedactor();
  const logger = redactingLogger(options.logger ?? silentLogger, redactor);

  /** The answer to one request, with its method label; `notification` when no answer is owed. */
  async function answer(request: unknown, context: RpcRequestContext): Promise<{ label: string; response: JsonRpcResponse; notification: boolean }> {
    const invalid = (id: JsonRpcId, message: string) => ({
      label: "invalid",
      response: errorResponse(id, RpcErrorCode.invalidRequest, `invalid request: ${message}`),
      notification: false,
    });
    if (typeof request !== "object" || request === null || Array.isArray(request)) return invalid(null, "expected a JSON-RPC request object");
    const { id, method, params, jsonrpc } = request as Record<string, unknown>;
    const validId = id === undefined || id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    if (!validId) return invalid(null, "id must be a number, a string or null");
    const replyId = (id ?? null) as JsonRpcId;
    if (jsonrpc !== undefined && jsonrpc !== null && jsonrpc !== "2.0") return invalid(replyId, 'jsonrpc must be "2.0"');
    if (typeof method !== "string") return invalid(replyId, "method must be a string");
    // A request without an id is a notification: it runs, and nothing is answered, not even an error.
    const notification = id === undefined;
    const run = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!run) {
      return { label: "unknown", notification, response: errorResponse(replyId, RpcErrorCode.methodNotFound, `method ${method} is not supported`) };
    }
    const reply = (response: JsonRpcResponse) => ({ label: method, response, notification });
    if (params !== undefined && params !== null && !Array.isArray(params)) {
      return reply(errorResponse(replyId, RpcErrorCode.invalidParams, "invalid params: params must be an array"));
    }
    try {
      const call = () => run(withoutTrailingNulls((params as unknown[] | null | undefined) ?? []), bundler, context);
      const result = await (options.drain ? options.drain.run(call) : call());
      return reply({ jsonrpc: "2.0", id: replyId, result });
    } catch (error) {
      // Domain errors meet their ERC-7769 codes here, and only here (`toRpcError`).
      const wire = rpcErrorOf(error);
      if (wire) return reply(errorResponse(replyId, wire.code, redactor.text(wire.message), redactor.value(wire.data)));
      logger.error("internal error", { method, error: String(error) });
      return reply(errorResponse(replyId, RpcErrorCode.internalError, "internal error"));
    }
  }

  async function handleOne(request: unknown, context: RpcRequestContext): Promise<JsonRpcResponse | undefined> {
    const started = performance.now();
    const { label, response, notification } = await answer(request, context);
    options.observe?.(label, "error" in response ? response.error.code : undefined, (performance.now() - started) / 1000);
    return notification ? undefined : response;
  }

  return {
    async handle(body, context = {}) {
      if (!Array.isArray(body)) return handleOne(body, context);
      if (body.length === 0) return errorResponse(null, RpcErrorCode.invalidRequest, "invalid request: empty batch");
      if (body.length > maxBatchSize) {
        return errorResponse(null, RpcErrorCode.invalidRequest, `invalid request: batch of ${body.length} exceeds the limit of ${maxBatchSize}`);
      }
      const responses = (await Promise.all(body.map((request) => handleOne(request, context)))).filter((r): r is JsonRpcResponse => r !== undefined);
      return responses.length > 0 ? responses : undefined;
    },
    parseError(detail) {
      options.observe?.("invalid", RpcErrorCode.parseError, 0);
      return errorResponse(null, RpcErrorCode.parseError, `parse error: ${detail}`);
    },
  };
}
