import type { Address, Hex } from "viem";
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

/** What estimating a `handleOps` call answers: its gas, or its revert (the EntryPoint's `FailedOp` data, say). */
export type HandleOpsEstimate = { reverted: false; gas: bigint } | { reverted: true; data: Hex; message: string };

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
  /**
   * Optional: the gas of the `handleOps` call carrying `ops` (in this order) from `from`, on the
   * latest block, as `eth_estimateGas` answers it, told the operations rather than read from the
   * call's calldata: for a chain that models the EntryPoint instead of running it (the simulated
   * chain). Without it the engine encodes the call and asks the chain (`eth_estimateGas`), as it
   * always does for a bundle on a block builder's state.
   */
  estimateHandleOps?(entryPoint: EntryPoint, ops: readonly UserOperation[], from: Address): Promise<HandleOpsEstimate>;
  /** Release the tracer's workers. */
  close(): Promise<void>;
}
