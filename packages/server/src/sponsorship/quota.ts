import { type Clock, maxCostOf, toQuantity } from "@bundlekit/core";
import { refuse, type SponsorshipPolicy, sponsor } from "./policy.ts";

/** How much one sponsor may sign for within any window of `windowSeconds`. */
export interface SponsorQuota {
  windowSeconds: number;
  /** Most signatures in a window. */
  operations: number;
  /** Most wei in a window, counting each signed operation at its max cost (`maxCostOf`). */
  cost: bigint;
}

/**
 * Refuses a signature that would take the sponsor past its quota in the sliding window that ends
 * now (on `clock`), and records each signature it lets through. Stub data is not counted. Counts
 * live in memory: they restart empty with the service and are not shared between services (see
 * docs/security.md). Each signature counts at the most its operation may cost, whether or not the
 * operation is ever sent, so a signed operation can never cost more than was counted.
 */
export function quotaPerWindow(quota: SponsorQuota, clock: Clock): SponsorshipPolicy {
  const windowMs = quota.windowSeconds * 1000;
  /** Signatures in the window, oldest first; never more than `quota.operations`. */
  const signed: { at: number; cost: bigint }[] = [];
  return ({ method, userOperation }) => {
    if (method !== "pm_getPaymasterData") return sponsor;
    const now = clock.now();
    while (signed.length > 0 && signed[0]!.at <= now - windowMs) signed.shift();
    const per = `per ${quota.windowSeconds} s`;
    if (signed.length >= quota.operations) {
      const freeInSeconds = Math.ceil((signed[0]!.at + windowMs - now) / 1000);
      return refuse(
        `quota of ${quota.operations} operations ${per} reached; the next frees up in ${freeInSeconds} s`,
        {
          cap: "quota.operations",
          limit: quota.operations,
        },
      );
    }
    const cost = maxCostOf(userOperation);
    const used = signed.reduce((sum, entry) => sum + entry.cost, 0n);
    if (used + cost > quota.cost) {
      return refuse(
        `quota of ${quota.cost} wei ${per} would be exceeded: ${used} wei signed, this operation may cost ${cost} wei`,
        {
          cap: "quota.cost",
          limit: toQuantity(quota.cost),
          used: toQuantity(used),
          value: toQuantity(cost),
        },
      );
    }
    signed.push({ at: now, cost });
    return sponsor;
  };
}
