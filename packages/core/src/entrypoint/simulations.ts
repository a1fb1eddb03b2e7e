import type { Abi, Hex } from "viem";
import v07 from "account-abstraction-v07/artifacts/EntryPointSimulations.json" with { type: "json" };
import v08 from "account-abstraction-v08/artifacts/EntryPointSimulations.json" with { type: "json" };

/**
 * `EntryPointSimulations` of v0.7 and v0.8. It is never deployed: the bundler places its runtime
 * code at the EntryPoint address with a state override, so `simulateValidation` and
 * `simulateHandleOp` run against the real EntryPoint's storage.
 */
export interface EntryPointSimulations {
  readonly abi: Abi;
  readonly deployedBytecode: Hex;
}

export const entryPointSimulations07: EntryPointSimulations = {
  abi: v07.abi as Abi,
  deployedBytecode: v07.deployedBytecode as Hex,
};

export const entryPointSimulations08: EntryPointSimulations = {
  abi: v08.abi as Abi,
  deployedBytecode: v08.deployedBytecode as Hex,
};
