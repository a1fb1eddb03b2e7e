import type { Address } from "viem";
import { listNaming } from "../mempool/list-in-pool.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { StatusListener } from "../status/status-change.ts";
import { entitiesOf } from "../userop/entities.ts";

export interface EvictBannedContext {
  store: Pick<MempoolStore, "listBySender" | "listByEntity" | "drop">;
  emit: StatusListener;
  now: number;
}

/**
 * GREP-010: the pending operations of the `banned` entities leave the pool (`dropped`, with the
 * entity named). Returns how many left.
 */
export async function evictBanned(context: EvictBannedContext, entryPoint: Address, banned: readonly Address[]): Promise<number> {
  let evicted = 0;
  for (const address of banned) {
    for (const entry of await listNaming(context.store, entryPoint, address)) {
      if (entry.status !== "pending") continue;
      const entity = entitiesOf(entry.userOperation).find((e) => e.address.toLowerCase() === address.toLowerCase())!;
      const reason = `GREP-010: ${entity.role} ${entity.address} is banned`;
      await context.store.drop([entry.userOpHash], reason, context.now);
      context.emit({ userOpHash: entry.userOpHash, status: "dropped", reason });
      evicted++;
    }
  }
  return evicted;
}
