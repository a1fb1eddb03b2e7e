import type { Address } from "viem";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { StatusListener } from "../status/status-change.ts";
import { entitiesOf } from "./entities.ts";
import type { Reputation } from "./reputation.ts";

export interface EvictBannedContext {
  store: Pick<MempoolStore, "list" | "drop">;
  reputation: Pick<Reputation, "banned">;
  emit: StatusListener;
  now: number;
}

/**
 * GREP-010: the pending operations of an entity that became banned leave the pool (`dropped`,
 * with the entity named). Returns how many left.
 */
export async function evictBanned(context: EvictBannedContext, entryPoint: Address): Promise<number> {
  const banned = new Set((await context.reputation.banned(entryPoint)).map((a) => a.toLowerCase()));
  if (banned.size === 0) return 0;
  let evicted = 0;
  for (const entry of await context.store.list("pending", { entryPoint })) {
    const entity = entitiesOf(entry.userOperation).find((e) => banned.has(e.address.toLowerCase()));
    if (!entity) continue;
    const reason = `GREP-010: ${entity.role} ${entity.address} is banned`;
    await context.store.drop([entry.userOpHash], reason, context.now);
    context.emit({ userOpHash: entry.userOpHash, status: "dropped", reason });
    evicted++;
  }
  return evicted;
}
