import { createMemoryMempoolStore } from "./memory-mempool-store.ts";
import { mempoolStoreContract } from "./mempool-store-contract.ts";

mempoolStoreContract("memory", async () => ({ store: createMemoryMempoolStore() }));
