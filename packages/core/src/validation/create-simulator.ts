import { BundlerConfigError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Simulator } from "../ports/simulator.ts";
import { createInProcessTracer } from "./tracers/in-process/in-process-tracer.ts";
import { createJsTracer } from "./tracers/js/js-tracer.ts";
import { createUnsafeSimulator, createTracingSimulator } from "./simulators.ts";

export const validationModes = ["safe", "unsafe"] as const;
export const validationTracers = ["in-process", "js"] as const;

/** How validation runs (see docs/configuration.md). */
export interface ValidationConfig {
  /** `safe` traces every validation and enforces ERC-7562; `unsafe` only simulates (nodes without tracing). Default `safe`. */
  validationMode: "safe" | "unsafe";
  /** In safe mode, how the trace is collected: `in-process` (prestate + local EVM) or `js` (the node's JavaScript tracer). Default `in-process`. */
  validationTracer: (typeof validationTracers)[number];
  /** Worker threads of the in-process tracer; 0 runs it on the main thread. Default 2. */
  tracerWorkers: number;
  /** The chain has the P256VERIFY precompile at 0x100 (RIP-7212 / EIP-7951): entities may call it, and the in-process EVM runs it. Default false. */
  p256Precompile: boolean;
}

/** The simulator the configuration names. */
export function createSimulator(client: ChainClient, chainId: number, config: ValidationConfig): Simulator {
  if (config.validationMode === "unsafe") return createUnsafeSimulator(client);
  if (config.validationMode !== "safe") throw new BundlerConfigError(`validationMode must be "safe" or "unsafe", got "${String(config.validationMode)}"`);
  if (config.validationTracer === "in-process") {
    return createTracingSimulator(createInProcessTracer({ client, chainId, workers: config.tracerWorkers, p256Precompile: config.p256Precompile }), client);
  }
  if (config.validationTracer === "js") return createTracingSimulator(createJsTracer({ client }), client);
  throw new BundlerConfigError(`validationTracer must be one of ${validationTracers.join(", ")}, got "${String(config.validationTracer)}"`);
}
