import type { Address } from "viem";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import { type Erc7562AdmissionOptions, erc7562Admission } from "./erc7562-admission.ts";
import { byArrival, fillBudget } from "./policy-building-blocks.ts";

/**
 * Fairness across senders: round robin. Each bundle serves first the senders served longest ago
 * (never-served ones first, then by arrival), so a sender sending much cannot starve the others
 * however much it pays. The policy remembers when it last chose each sender. A full pool lets
 * go first of the senders holding the most operations, their newest first.
 */
export function createFairMempoolPolicy(options: Erc7562AdmissionOptions = {}): MempoolPolicy {
  /** The bundle count at which each sender was last chosen. */
  const lastServed = new Map<Address, number>();
  let bundles = 0;
  const served = (sender: Address) => lastServed.get(sender.toLowerCase() as Address) ?? -1;
  return {
    name: "fair",
    admit: erc7562Admission(options),
    select(candidates, limits) {
      const ordered = [...candidates].sort(
        (a, b) => served(a.userOperation.sender) - served(b.userOperation.sender) || byArrival(a, b),
      );
      const chosen = fillBudget(ordered, limits);
      bundles++;
      for (const entry of chosen) lastServed.set(entry.userOperation.sender.toLowerCase() as Address, bundles);
      return chosen;
    },
    evict(pending, { excess }) {
      const held = new Map<string, number>();
      for (const entry of pending) {
        const sender = entry.userOperation.sender.toLowerCase();
        held.set(sender, (held.get(sender) ?? 0) + 1);
      }
      const heldBy = (entry: (typeof pending)[number]) => held.get(entry.userOperation.sender.toLowerCase())!;
      return [...pending].sort((a, b) => heldBy(b) - heldBy(a) || byArrival(b, a)).slice(0, Math.max(0, excess));
    },
  };
}
