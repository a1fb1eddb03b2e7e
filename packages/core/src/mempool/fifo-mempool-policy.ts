import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import { type Erc7562AdmissionOptions, erc7562Admission } from "./erc7562-admission.ts";
import { byArrival, fillBudget } from "./policy-building-blocks.ts";

/** First in, first out: bundles take operations in the order they arrived, whatever they pay; a full pool lets the newest go. */
export function createFifoMempoolPolicy(options: Erc7562AdmissionOptions = {}): MempoolPolicy {
  return {
    name: "fifo",
    admit: erc7562Admission(options),
    select: (candidates, limits) => fillBudget([...candidates].sort(byArrival), limits),
    evict: (pending, { excess }) => [...pending].sort((a, b) => byArrival(b, a)).slice(0, Math.max(0, excess)),
  };
}
