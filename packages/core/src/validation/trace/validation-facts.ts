import type { Address } from "viem";
import type { ValidationFacts } from "../../ports/mempool-store.ts";
import type { ValidationTrace } from "../../ports/validation-trace.ts";

/**
 * What the pool keeps of a trace for the checks before bundling: code hashes, the contracts whose
 * storage it touched, and which entities were staked (`staked`, from the validation's stake infos).
 */
export function validationFacts(trace: ValidationTrace, staked: ValidationFacts["staked"] = []): ValidationFacts {
  const touched = new Set<Address>();
  for (const phase of trace.phases) {
    for (const address of [...Object.keys(phase.storage), ...Object.keys(phase.transientStorage)]) touched.add(address.toLowerCase() as Address);
  }
  return { codeHashes: { ...trace.codeHashes }, storageContracts: [...touched].sort(), ...(staked.length > 0 ? { staked } : {}) };
}
