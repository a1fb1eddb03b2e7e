import type { Abi, Hex } from "viem";
import v07 from "account-abstraction-v07/artifacts/EntryPointSimulations.json" with { type: "json" };
import v08 from "account-abstraction-v08/artifacts/EntryPointSimulations.json" with { type: "json" };
import v09 from "account-abstraction-v09/artifacts/EntryPointSimulations.json" with { type: "json" };

/**
 * `EntryPointSimulations` of v0.7, v0.8 and v0.9. It is never deployed: the bundler places its
 * runtime code at the EntryPoint address with a state override, so `simulateValidation` and
 * `simulateHandleOp` run against the real EntryPoint's storage. v0.9's comes from
 * `@account-abstraction/contracts` 0.9.0-rc.1, the only npm release of v0.9.
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

export const entryPointSimulations09: EntryPointSimulations = {
  abi: v09.abi as Abi,
  deployedBytecode: v09.deployedBytecode as Hex,
};
