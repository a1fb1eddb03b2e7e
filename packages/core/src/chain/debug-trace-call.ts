import type { Address, Hex, RpcStateOverride } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";

/** A call as `debug_traceCall` takes it: hex quantities. */
export interface RpcTraceCall {
  from?: Address | undefined;
  to: Address;
  data: Hex;
  gas: Hex;
}

/** Which tracer runs, and how. */
export interface TraceCallOptions {
  /** A built-in tracer's name (`prestateTracer`) or a JavaScript tracer's source. */
  tracer: string;
  tracerConfig?: { diffMode?: boolean; disableStorage?: boolean } | undefined;
  /** The state override the call runs with (`stateOverrides`, the spelling nodes honour). */
  stateOverrides?: RpcStateOverride | undefined;
}

/** One account as the node's `prestateTracer` reports it; absent fields are zero or empty. */
export interface PrestateAccount {
  balance?: Hex;
  nonce?: number;
  code?: Hex;
  storage?: Record<Hex, Hex>;
}

/** What each tracer answers: the `prestateTracer` (by address), in diff mode, or a JavaScript tracer's own result. */
export type PrestateTrace = Record<Address, PrestateAccount>;
export interface PrestateDiffTrace {
  pre?: Record<Address, PrestateAccount>;
  post?: Record<Address, PrestateAccount>;
}

/**
 * `debug_traceCall` of `call` on the latest block. The answer's shape is the tracer's: `result`
 * names it (`PrestateTrace`, `PrestateDiffTrace`, or a JavaScript tracer's result type).
 */
export function debugTraceCall<result>(
  client: ChainClient,
  call: RpcTraceCall,
  options: TraceCallOptions,
): Promise<result> {
  return client.request<{
    Parameters: [call: RpcTraceCall, block: "latest", options: TraceCallOptions];
    ReturnType: result;
  }>({
    method: "debug_traceCall",
    params: [call, "latest", options],
  });
}
