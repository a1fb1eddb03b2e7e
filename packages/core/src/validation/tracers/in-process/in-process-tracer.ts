import { TraceIncompleteError } from "../../../errors/errors.ts";
import type { ChainClient } from "../../../ports/chain-client.ts";
import type { ValidationTracer } from "../../../ports/validation-tracer.ts";
import { type BlockEnvironment, fetchBlockEnvironment, fetchPrestate } from "../prestate.ts";
import { runTracedCall, type TracedCallInput, type TracedCallOutput } from "./run-traced-call.ts";
import { createTraceWorkerPool } from "./trace-worker-pool.ts";

export interface InProcessTracerParameters {
  client: ChainClient;
  chainId: number;
  /** Worker threads that run the EVM; 0 runs it on the calling thread. Default 2. */
  workers?: number | undefined;
  /** The chain has the P256VERIFY precompile at 0x100 (RIP-7212 / EIP-7951). Default false. */
  p256Precompile?: boolean | undefined;
  /** Milliseconds the latest block's environment is reused across validations. Default 1000. */
  blockCacheMs?: number | undefined;
}

/**
 * The default `ValidationTracer`: one `debug_traceCall` with the node's `prestateTracer` fetches
 * exactly the state the validation reads, then `@ethereumjs/evm` re-executes it with an ERC-7562
 * collector, in worker threads. A read outside the prestate throws `TraceIncompleteError`.
 * Code hashes come from the prestate.
 */
export function createInProcessTracer(parameters: InProcessTracerParameters): ValidationTracer {
  const { client } = parameters;
  const workers = parameters.workers ?? 2;
  const pool = workers > 0 ? createTraceWorkerPool(workers) : undefined;
  pool?.start();
  const run: (input: TracedCallInput) => Promise<TracedCallOutput> = pool ? pool.run : runTracedCall;
  const blockCacheMs = parameters.blockCacheMs ?? 1000;
  let block: { at: number; value: Promise<BlockEnvironment> } | undefined;
  const latestBlock = () => {
    const now = Date.now();
    if (!block || now - block.at > blockCacheMs) {
      const value = fetchBlockEnvironment(client);
      value.catch(() => {
        block = undefined;
      });
      block = { at: now, value };
    }
    return block.value;
  };

  return {
    name: "in-process",
    async trace(request) {
      const [prestate, environment] = await Promise.all([fetchPrestate(client, request.call, request.stateOverride), latestBlock()]);
      const output = await run({
        request,
        prestate,
        block: environment,
        chainId: parameters.chainId,
        p256Precompile: parameters.p256Precompile ?? false,
      });
      if (output.missing.length > 0) throw new TraceIncompleteError(output.missing);
      return { result: output.result, trace: output.trace };
    },
    async close() {
      await pool?.close();
    },
  };
}
