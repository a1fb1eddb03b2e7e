import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { MempoolEntry } from "../ports/mempool-store.ts";
import { type Erc7562AdmissionOptions, erc7562Admission } from "./erc7562-admission.ts";
import { byArrival, evictLowestValue, fillBudget } from "./policy-building-blocks.ts";

/** Options of the default policy: its admission rules (`erc7562Admission`). */
export type DefaultMempoolPolicyOptions = Erc7562AdmissionOptions;

/**
 * The default policy: ERC-4337 / ERC-7562 admission (`erc7562Admission`), and bundles that take
 * the highest `maxPriorityFeePerGas` first (what the bundler earns per gas), the oldest first
 * among equals, within the bundle's gas budget; a full pool lets the lowest priority fees go.
 */
export function createDefaultMempoolPolicy(options: DefaultMempoolPolicyOptions = {}): MempoolPolicy {
  return {
    name: "default",
    admit: erc7562Admission(options),
    select: (candidates, limits) => fillBudget([...candidates].sort(byPriorityFee), limits),
    evict: evictLowestValue,
  };
}

function byPriorityFee(a: MempoolEntry, b: MempoolEntry): number {
  const [x, y] = [a.userOperation.maxPriorityFeePerGas, b.userOperation.maxPriorityFeePerGas];
  if (x !== y) return x > y ? -1 : 1;
  return byArrival(a, b);
}
