import type { ChainClient } from "../ports/chain-client.ts";
import type { Simulator } from "../ports/simulator.ts";
import { createInProcessTracer } from "./tracers/in-process/in-process-tracer.ts";
import { createJsTracer } from "./tracers/js/js-tracer.ts";
import { createUnsafeSimulator, createTracingSimulator } from "./simulators.ts";

export const validationModes = ["safe", "unsafe"] as const;
export const validationTracers = ["in-process", "js"] as const;

/** How validation runs, and the limits it holds operations to (see docs/configuration.md). */
export interface ValidationSettings {
  /** `safe` traces every validation and enforces ERC-7562; `unsafe` only simulates (nodes without tracing). Default `safe`. */
  readonly mode: (typeof validationModes)[number];
  /**
   * In safe mode, how the trace is collected: `in-process` (prestate + local EVM) or `js` (the
   * node's JavaScript tracer). With a custom `simulator`, the engine reports its tracer's name
   * here. Default `in-process`.
   */
  readonly tracer: (typeof validationTracers)[number] | (string & {});
  /** Worker threads of the in-process tracer; 0 runs it on the main thread. Default 2. */
  readonly tracerWorkers: number;
  /** The chain has the P256VERIFY precompile at 0x100 (RIP-7212 / EIP-7951): entities may call it, and the in-process EVM runs it. Default false. */
  readonly p256Precompile: boolean;
  /** Most bytes of an operation ABI-encoded as its EntryPoint takes it (ERC-7562 LIM-010). Default 8192. */
  readonly maxUserOperationBytes: number;
  /** Most bytes of `context` a paymaster's validation may return (LIM-020). Default 2048. */
  readonly maxPaymasterContextBytes: number;
  /**
   * Most simulations (`sendUserOperation` admissions and `estimateUserOperationGas` runs) in
   * progress at once, across all callers. Default 16.
   */
  readonly maxConcurrentSimulations: number;
  /**
   * Most simulations waiting for a slot; past it a request fails at once with -32005 (busy).
   * Default 128: about what the service simulates in two or three seconds at saturation on 2
   * cores, so the slots stay busy while refused callers wait before retrying (bench/README.md).
   */
  readonly maxQueuedSimulations: number;
  /**
   * Longest a simulation waits for a slot before it fails with -32005 (busy). Default 5000: half
   * of viem's request timeout, so a caller is answered before it gives up on the request.
   */
  readonly maxSimulationWaitMs: number;
}

/** The simulator the settings name: `unsafe`, or `safe` with the named tracer (any other name is the in-process one's). */
export function createSimulator(client: ChainClient, chainId: number, settings: Pick<ValidationSettings, "mode" | "tracer" | "tracerWorkers" | "p256Precompile">): Simulator {
  if (settings.mode === "unsafe") return createUnsafeSimulator(client);
  if (settings.tracer === "js") return createTracingSimulator(createJsTracer({ client }), client);
  return createTracingSimulator(createInProcessTracer({ client, chainId, workers: settings.tracerWorkers, p256Precompile: settings.p256Precompile }), client);
}
