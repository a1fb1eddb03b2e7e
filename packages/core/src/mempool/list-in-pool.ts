import type { Address } from "viem";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";

/** Operations still in the pool (pending, being bundled, or sent and not yet on chain) on `entryPoint`. */
export async function listInPool(store: Pick<MempoolStore, "list">, entryPoint: Address): Promise<MempoolEntry[]> {
  const lists = await Promise.all((["pending", "bundling", "submitted"] as const).map((status) => store.list(status, { entryPoint })));
  return lists.flat();
}
