import type { Address, Hex } from "viem";
import type { EthCallResult, StateOverride } from "./eth-call.ts";
import type { ValidationTrace } from "./validation-trace.ts";

/** A validation call to trace: the EntryPoint's simulation, as `eth_call` would run it. */
export interface TraceCallRequest {
  call: { from: Address; to: Address; data: Hex; gas: bigint };
  stateOverride?: StateOverride | undefined;
  /** The EntryPoint: each call it makes opens a phase of the trace. */
  entryPoint: Address;
}

/** The call's outcome (what `eth_call` would answer) and its normalised trace. */
export interface TracedValidation {
  result: EthCallResult;
  trace: ValidationTrace;
}

/**
 * Collects what ERC-7562 looks at in a validation, in a normalised form: in-process on the node's
 * prestate, through the node's JavaScript tracer, or a native tracer. The rules never see which
 * one ran. Throws `TraceIncompleteError` when it cannot see everything, never guesses.
 */
export interface ValidationTracer {
  /** Shown at start-up and in `bundler_config`, e.g. `in-process`, `js-tracer`. */
  readonly name: string;
  trace(request: TraceCallRequest): Promise<TracedValidation>;
  /** Release workers or connections. */
  close?(): Promise<void>;
}
