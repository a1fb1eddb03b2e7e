import { performance } from "node:perf_hooks";
import type { JsonRpcResponse, RpcHandler } from "@bundlekit/core";

export interface ObserveHandlerOptions {
  handler: RpcHandler;
  /** The handler's batch limit: larger batches go to the handler whole, for its error. */
  maxBatchSize: number;
  /** Method names the handler serves; any other name is observed as `unknown`. */
  methods: ReadonlySet<string>;
  /** Called once per request with its bounded method label, its error code (undefined on success) and its time. */
  observe?: ((method: string, code: number | undefined, seconds: number) => void) | undefined;
}

/** The method label of one request: its name when served, `unknown` when not, `invalid` when it is no request. */
function methodLabel(item: unknown, methods: ReadonlySet<string>): string {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return "invalid";
  const { method } = item as { method?: unknown };
  if (typeof method !== "string") return "invalid";
  return methods.has(method) ? method : "unknown";
}

/**
 * The handler, answering batches one request at a time so each request's method and outcome can
 * be observed. Batch items run concurrently and answer in order, as the handler's own batches do.
 */
export function observeHandler(options: ObserveHandlerOptions): RpcHandler {
  const { handler, maxBatchSize, methods, observe } = options;
  if (!observe) return handler;

  async function handleOne(item: unknown): Promise<JsonRpcResponse | undefined> {
    const started = performance.now();
    // A batch nested in a batch is no request: `null` draws the handler's own "invalid request" answer.
    const answer = (await handler.handle(Array.isArray(item) ? null : item)) as
      | JsonRpcResponse
      | undefined;
    observe?.(
      methodLabel(item, methods),
      answer && "error" in answer ? answer.error.code : undefined,
      (performance.now() - started) / 1000,
    );
    return answer;
  }

  return {
    async handle(body) {
      if (!Array.isArray(body)) return handleOne(body);
      if (body.length === 0 || body.length > maxBatchSize) return handler.handle(body);
      const answers = (await Promise.all(body.map(handleOne))).filter(
        (answer) => answer !== undefined,
      );
      return answers.length > 0 ? answers : undefined;
    },
    parseError(detail) {
      const answer = handler.parseError(detail);
      observe("invalid", "error" in answer ? answer.error.code : undefined, 0);
      return answer;
    },
  };
}
