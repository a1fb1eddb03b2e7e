import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import { type Erc7562AdmissionOptions, erc7562Admission } from "./erc7562-admission.ts";
import { byArrival, fillBudget } from "./fill-budget.ts";

/** First in, first out: bundles take operations in the order they arrived, whatever they pay. */
export function createFifoMempoolPolicy(options: Erc7562AdmissionOptions = {}): MempoolPolicy {
  return {
    name: "fifo",
    admit: erc7562Admission(options),
    select: (candidates, limits) => fillBudget([...candidates].sort(byArrival), limits),
  };
}
