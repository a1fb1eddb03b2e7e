import { createMemoryMempoolStore, createMemoryReputationStore } from "@bundlekit/core/testing";
import {
  createPostgresMempoolStore,
  createPostgresReputationStore,
  createSqliteMempoolStore,
  createSqliteReputationStore,
} from "@bundlekit/storage-kysely";
import { Effect, Layer } from "effect";
import { MempoolStoreService, ReputationStoreService } from "./ports.ts";

/** Open a store on acquire and close it on release, with the layer's scope. */
const scopedStore = <S extends { close?(): Promise<void> }>(open: () => Promise<S>) =>
  Effect.acquireRelease(
    Effect.promise(() => open()),
    (store) => Effect.promise(async () => store.close?.()),
  );

/** Mempool and reputation in process memory: nothing survives the scope. */
export const memoryStores: Layer.Layer<MempoolStoreService | ReputationStoreService> = Layer.merge(
  Layer.sync(MempoolStoreService, () => createMemoryMempoolStore()),
  Layer.sync(ReputationStoreService, () => createMemoryReputationStore()),
);

/** Mempool and reputation in one SQLite file (`:memory:` keeps nothing), opened and closed with the scope. */
export const sqliteStores = (filename: string): Layer.Layer<MempoolStoreService | ReputationStoreService> =>
  Layer.merge(
    Layer.effect(MempoolStoreService, scopedStore(() => createSqliteMempoolStore({ filename }))),
    Layer.effect(ReputationStoreService, scopedStore(() => createSqliteReputationStore({ filename }))),
  );

/** Mempool and reputation in PostgreSQL (shared by every engine on the database), opened and closed with the scope. */
export const postgresStores = (connectionString: string): Layer.Layer<MempoolStoreService | ReputationStoreService> =>
  Layer.merge(
    Layer.effect(MempoolStoreService, scopedStore(() => createPostgresMempoolStore({ connectionString }))),
    Layer.effect(ReputationStoreService, scopedStore(() => createPostgresReputationStore({ connectionString }))),
  );
