import { createMemoryReputationStore } from "./memory-reputation-store.ts";
import { reputationStoreContract } from "../../../testing/src/index.ts";

reputationStoreContract("memory", async () => ({ store: createMemoryReputationStore() }));
