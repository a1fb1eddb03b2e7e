import type { Address } from "viem";
import type { ValidationFacts } from "../../ports/mempool-store.ts";
import type { ValidationTrace } from "./validation-trace.ts";

/** What the pool keeps of a trace for the checks before bundling: code hashes and the contracts whose storage it touched. */
export function validationFacts(trace: ValidationTrace): ValidationFacts {
  const touched = new Set<Address>();
  for (const phase of trace.phases) {
    for (const address of [...Object.keys(phase.storage), ...Object.keys(phase.transientStorage)]) touched.add(address.toLowerCase() as Address);
  }
  return { codeHashes: { ...trace.codeHashes }, storageContracts: [...touched].sort() };
}
