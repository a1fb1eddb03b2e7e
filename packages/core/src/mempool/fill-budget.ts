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
