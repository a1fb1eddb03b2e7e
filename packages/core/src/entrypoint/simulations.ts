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

/**
 * v0.9's reentrancy guard admits only a call whose sender is `tx.origin` and has no code. The gas
 * estimator runs `simulateHandleOp` from `GasLimitSearch`, placed at the EntryPoint's own address
 * (`gas/search-gas-limits.ts`), which the guard refuses (`Reentrancy()`). In code that only ever
 * runs inside an `eth_call` the guard protects nothing, so its test is taken out: each
 * `CALLER ORIGIN EQ DUP1 PUSH2 <the code check> JUMPI` becomes `PUSH1 1` and `JUMPDEST`s (no-ops),
 * which leaves "allowed" on the stack, every other byte in place. The release's code has the
 * sequence twice (`simulateHandleOp`, `handleOps`); anything else throws here, at load.
 */
export function withoutOriginGuard(code: Hex): Hex {
  const guard = /3332148061[0-9a-f]{4}57/g;
  const found = code.match(guard)?.length ?? 0;
  if (found !== 2) throw new Error(`EntryPointSimulations v0.9: expected its reentrancy guard twice, found it ${found} times`);
  return code.replace(guard, `6001${"5b".repeat(6)}`) as Hex;
}

export const entryPointSimulations09: EntryPointSimulations = {
  abi: v09.abi as Abi,
  deployedBytecode: withoutOriginGuard((v09.deployedBytecode as Hex).toLowerCase() as Hex),
};
