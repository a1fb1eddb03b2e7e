import type { EntryPoint } from "../entrypoint/registry.ts";
import type { UserOperation } from "../userop/types.ts";
import type { ValidationResult } from "./validation-result.ts";
import type { StateOverride } from "./eth-call.ts";
import type { ValidationTrace } from "./validation-trace.ts";

/** What simulating an operation's validation tells: the EntryPoint's result and, when traced, the ERC-7562 trace. */
export interface SimulatedValidation {
  validation: ValidationResult;
  /** Undefined in unsafe mode: nothing to check the rules on. */
  trace: ValidationTrace | undefined;
}

/**
 * Runs an operation's validation on the chain's current state. `safe` simulators trace it (through
 * a `ValidationTracer`) so the ERC-7562 rules can be checked; the `unsafe` one only calls
 * `simulateValidation`. A `FailedOp` throws an `EntryPointRefusal`.
 */
export interface Simulator {
  readonly mode: "safe" | "unsafe";
  /** The tracer in use (`in-process`, `js-tracer`), undefined when unsafe. */
  readonly tracer: string | undefined;
  simulateValidation(entryPoint: EntryPoint, op: UserOperation, options?: { stateOverride?: StateOverride | undefined }): Promise<SimulatedValidation>;
  /** Release the tracer's workers. */
  close(): Promise<void>;
}
