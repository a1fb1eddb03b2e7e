import {
  byArrival,
  erc7562Admission,
  evictLowestValue,
  fillBudget,
  type MempoolEntry,
  type MempoolPolicy,
} from "@bundlekit/core";

/** Options of the largest-gas policy: its admission rules, as the shipped policies take them. */
export interface LargestGasOptions {
  /** ERC-7562 `SAME_SENDER_MEMPOOL_COUNT` (the engine's `mempool.sameSenderCount`). Default 4. */
  sameSenderMempoolCount?: number;
}

/**
 * Largest gas first: bundles take the operations with the highest gas limits first (the oldest
 * first among equals), packed into the gas budget. A worked example of a policy of one's own
 * (docs/research.md): compare it with `pnpm research --policy examples/mempool-research/policies/largest-gas.ts`.
 */
export function createLargestGasPolicy(options: LargestGasOptions = {}): MempoolPolicy {
  const gas = (entry: MempoolEntry) =>
    entry.userOperation.callGasLimit + entry.userOperation.verificationGasLimit;
  return {
    name: "largest-gas",
    admit: erc7562Admission({ sameSenderMempoolCount: options.sameSenderMempoolCount }),
    select: (candidates, limits) =>
      fillBudget(
        [...candidates].sort((a, b) =>
          gas(a) === gas(b) ? byArrival(a, b) : gas(a) > gas(b) ? -1 : 1,
        ),
        limits,
      ),
    evict: evictLowestValue,
  };
}
