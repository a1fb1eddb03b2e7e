import { createMemoryReputationStore } from "./memory-reputation-store.ts";
import { reputationStoreContract } from "./reputation-store-contract.ts";

reputationStoreContract("memory", async () => ({ store: createMemoryReputationStore() }));
