import type { Address } from "viem";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";

/** Operations still in the pool (pending, being bundled, or sent and not yet on chain) on `entryPoint`. */
export async function listInPool(store: Pick<MempoolStore, "list">, entryPoint: Address): Promise<MempoolEntry[]> {
  const lists = await Promise.all((["pending", "bundling", "submitted"] as const).map((status) => store.list(status, { entryPoint })));
  return lists.flat();
}

/** Operations still in the pool on `entryPoint` that name `address` in any role (sender, factory or paymaster), each once. */
export async function listNaming(store: Pick<MempoolStore, "listBySender" | "listByEntity">, entryPoint: Address, address: Address): Promise<MempoolEntry[]> {
  const [asSender, asEntity] = await Promise.all([store.listBySender(entryPoint, address), store.listByEntity(entryPoint, address)]);
  const seen = new Set(asSender.map((e) => e.userOpHash));
  return [...asSender, ...asEntity.filter((e) => !seen.has(e.userOpHash))];
}
