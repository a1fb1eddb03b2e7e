import { createMemoryMempoolStore, createMemoryReputationStore } from "@bundlekit/core";
import { Layer } from "effect";
import { MempoolStoreService, ReputationStoreService } from "./ports.ts";

/**
 * Mempool and reputation in process memory: nothing survives the scope. The SQLite and
 * PostgreSQL layers (`sqliteStores`, `postgresStores`) live with their drivers, in
 * `@bundlekit/storage-kysely/effect`.
 */
export const memoryStores: Layer.Layer<MempoolStoreService | ReputationStoreService> = Layer.merge(
  Layer.sync(MempoolStoreService, () => createMemoryMempoolStore()),
  Layer.sync(ReputationStoreService, () => createMemoryReputationStore()),
);
