import { createMemoryPreconfirmationStore } from "./memory-preconfirmation-store.ts";
import { preconfirmationStoreContract } from "../../../testing/src/index.ts";

preconfirmationStoreContract("memory", async () => ({ store: createMemoryPreconfirmationStore() }));
