import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { MempoolEntry } from "../ports/mempool-store.ts";
import { type Erc7562AdmissionOptions, erc7562Admission } from "./erc7562-admission.ts";
import { byArrival, evictLowestValue, fillBudget } from "./policy-building-blocks.ts";

/**
 * The profit-maximising packer: operations by what the bundler earns per gas in this block (the
 * effective tip, `min(maxPriorityFeePerGas, maxFeePerGas − baseFee)`), packed greedily into the
 * gas budget, skipping what no longer fits for smaller ones that do.
 */
export function createProfitMempoolPolicy(options: Erc7562AdmissionOptions = {}): MempoolPolicy {
  return {
    name: "profit",
    admit: erc7562Admission(options),
    select(candidates, limits) {
      const tip = (entry: MempoolEntry) => effectiveTip(entry, limits.block.baseFeePerGas);
      const ordered = [...candidates].sort((a, b) => {
        const [x, y] = [tip(a), tip(b)];
        return x === y ? byArrival(a, b) : x > y ? -1 : 1;
      });
      return fillBudget(ordered, limits);
    },
    evict: (pending, context) => evictLowestValue(pending, context),
  };
}

/** What the bundler keeps per gas of `entry` at `baseFee`: its priority fee, capped by what its max fee leaves. */
export function effectiveTip(entry: MempoolEntry, baseFee: bigint): bigint {
  const { maxFeePerGas, maxPriorityFeePerGas } = entry.userOperation;
  const room = maxFeePerGas - baseFee;
  if (room < maxPriorityFeePerGas) return room;
  return maxPriorityFeePerGas;
}
