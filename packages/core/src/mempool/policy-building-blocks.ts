/** The pieces the shipped mempool policies are made of, for policies of your own too. */
import type { BundleLimits } from "../ports/mempool-policy.ts";
import type { MempoolEntry } from "../ports/mempool-store.ts";

/** `ordered`, in order, keeping each entry that still fits the bundle's gas budget and count. */
export function fillBudget(ordered: readonly MempoolEntry[], limits: BundleLimits): MempoolEntry[] {
  const chosen: MempoolEntry[] = [];
  let gas = 0n;
  for (const entry of ordered) {
    if (chosen.length >= limits.maxOperations) break;
    const needed = limits.gasOf(entry);
    if (gas + needed > limits.gasBudget) continue;
    gas += needed;
    chosen.push(entry);
  }
  return chosen;
}

/** Oldest first; ties by hash, so the order is the same on every run. */
export function byArrival(a: MempoolEntry, b: MempoolEntry): number {
  return a.receivedAt - b.receivedAt || (a.userOpHash < b.userOpHash ? -1 : a.userOpHash > b.userOpHash ? 1 : 0);
}

/** The `excess` operations worth least to the bundler: lowest priority fee, the newest first among equals. */
export function evictLowestValue(pending: readonly MempoolEntry[], { excess }: { excess: number }): MempoolEntry[] {
  return [...pending]
    .sort((a, b) => {
      const [x, y] = [a.userOperation.maxPriorityFeePerGas, b.userOperation.maxPriorityFeePerGas];
      return x === y ? byArrival(b, a) : x < y ? -1 : 1;
    })
    .slice(0, Math.max(0, excess));
}
