import { createMemoryMempoolStore, createMemoryReputationStore } from "@bundlekit/core";
import { Layer } from "effect";
import { MempoolStorage, ReputationStorage } from "./ports.ts";

/**
 * Mempool and reputation in process memory: nothing survives the scope. The SQLite and
 * PostgreSQL layers (`sqliteStores`, `postgresStores`) live with their drivers, in
 * `@bundlekit/storage-kysely/effect`.
 */
export const memoryStores: Layer.Layer<MempoolStorage | ReputationStorage> = Layer.merge(
  Layer.sync(MempoolStorage, () => createMemoryMempoolStore()),
  Layer.sync(ReputationStorage, () => createMemoryReputationStore()),
);
