import type { EntryPointRegistry } from "../entrypoint/registry.ts";
import { evictLowestValue } from "../mempool/policy-building-blocks.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { ReputationStore } from "../ports/reputation-store.ts";
import { evictBanned } from "../reputation/evict-banned.ts";
import { createThrottledResidency } from "../reputation/evict-throttled.ts";
import type { Reputation } from "../reputation/reputation.ts";
import type { StatusListener } from "../status/status-change.ts";
import type { MempoolSettings } from "../mempool/mempool-settings.ts";

export interface HousekeepingContext {
  store: MempoolStore;
  client: ChainClient;
  policy: MempoolPolicy;
  reputation: Reputation;
  reputationStore: ReputationStore;
  entryPoints: EntryPointRegistry;
  settings: Pick<MempoolSettings, "ttlSeconds" | "maxSize">;
  logger: Logger;
  emit: StatusListener;
}

/** How often the engine asks the store to decay reputation: it decays once per hour, so each minute is plenty. */
const decayCheckMs = 60_000;

/**
 * The pool's upkeep before each bundling tick: operations pending longer than `ttlSeconds` are
 * dropped ("expired"; 0 keeps them), the policy chooses who leaves above `maxSize`
 * ("evicted: the mempool is full"), a banned entity's operations leave (GREP-010), so do a
 * throttled entity's after 10 blocks in the pool (GREP-020), and reputation decays when due.
 */
export function createHousekeeping(context: HousekeepingContext): (now: number) => Promise<void> {
  const { store, policy, settings, logger, emit } = context;
  let nextDecayAt = 0;
  const evictThrottledResidents = createThrottledResidency({ store, client: context.client, emit });

  async function evictOverCapacity(now: number) {
    const excess = (await store.countByStatus()).pending - settings.maxSize;
    if (excess <= 0) return;
    const pending = await store.list("pending");
    const offered = new Set(pending);
    const chosen = (policy.evict ?? evictLowestValue)(pending, { excess, now }).filter((e) => offered.delete(e)).slice(0, excess);
    const reason = "evicted: the mempool is full";
    await store.drop(chosen.map((e) => e.userOpHash), reason, now);
    for (const { userOpHash } of chosen) emit({ userOpHash, status: "dropped", reason });
    logger.warn("mempool full: operations evicted", { evicted: chosen.length, maxSize: settings.maxSize });
  }

  return async (now) => {
    if (settings.ttlSeconds > 0) {
      for (const userOpHash of await store.expire(now - settings.ttlSeconds * 1000, now)) {
        emit({ userOpHash, status: "dropped", reason: "expired" });
        logger.info("operation expired", { userOpHash });
      }
    }
    await evictOverCapacity(now);
    for (const { address } of context.entryPoints.all) {
      // One read of the entities' standing serves both GREP rules.
      const standing = await context.reputation.dump(address);
      const withStatus = (status: string) => standing.filter((e) => e.status === status).map((e) => e.address);
      await evictBanned({ store, emit, now }, address, withStatus("banned"));
      await evictThrottledResidents(address, withStatus("throttled"), now);
    }
    if (now >= nextDecayAt) {
      nextDecayAt = now + decayCheckMs;
      await context.reputationStore.decay(now);
    }
  };
}
