import type { Address, Hash } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";
import { listNaming } from "../mempool/list-in-pool.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { StatusListener } from "../status/status-change.ts";
import { entitiesOf } from "../userop/entities.ts";

/** ERC-7562 THROTTLED_ENTITY_LIVE_BLOCKS: how many blocks a throttled entity's operation may stay in the mempool. */
export const throttledEntityLiveBlocks = 10;

export interface EvictThrottledContext {
  store: Pick<MempoolStore, "listBySender" | "listByEntity" | "drop">;
  client: Pick<ChainClient, "getBlockNumber">;
  emit: StatusListener;
}

/**
 * GREP-020's residency limit: a pending operation of a throttled entity leaves the pool (`dropped`,
 * with the entity named) once it has waited `throttledEntityLiveBlocks` blocks while the entity was
 * throttled, counted from the first pass that found it so. The count lives in the engine's memory:
 * after a restart it starts again, which only ever lets an operation stay longer. The returned
 * function runs one pass on an EntryPoint, given its `throttled` entities, and resolves with how
 * many left.
 */
export function createThrottledResidency(
  context: EvictThrottledContext,
): (entryPoint: Address, throttled: readonly Address[], now: number) => Promise<number> {
  /** Per EntryPoint, operation → the block at which it was first found pending with a throttled entity. */
  const firstSeen = new Map<Address, Map<Hash, bigint>>();

  return async (entryPoint, throttled, now) => {
    const seen = firstSeen.get(entryPoint) ?? new Map<Hash, bigint>();
    /** What is still waiting after this pass: only these are remembered. */
    const waiting = new Map<Hash, bigint>();
    let evicted = 0;
    if (throttled.length > 0) {
      const head = await context.client.getBlockNumber({ cacheTime: 0 });
      for (const address of throttled) {
        for (const entry of (await listNaming(context.store, entryPoint, address)).filter((e) => e.status === "pending" && !waiting.has(e.userOpHash))) {
          const since = seen.get(entry.userOpHash) ?? head;
          if (head - since < BigInt(throttledEntityLiveBlocks)) {
            waiting.set(entry.userOpHash, since);
            continue;
          }
          const entity = entitiesOf(entry.userOperation).find((e) => e.address.toLowerCase() === address.toLowerCase())!;
          const reason = `GREP-020: ${entity.role} ${entity.address} is throttled, and its operations may stay ${throttledEntityLiveBlocks} blocks in the mempool`;
          await context.store.drop([entry.userOpHash], reason, now);
          context.emit({ userOpHash: entry.userOpHash, status: "dropped", reason });
          evicted++;
        }
      }
    }
    firstSeen.set(entryPoint, waiting);
    return evicted;
  };
}
