import {
  createMemoryMempoolStore,
  createMemoryReputationStore,
  type MempoolStore,
  type ReputationStore,
} from "@bundlekit/core";
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

/**
 * Both stores on one database, opened one after the other: the mempool store first, then the
 * reputation store, each migrating the schema when it opens. Two stores migrating a new SQLite
 * file at once both create the tables, and the second fails.
 */
const storesInOrder = (
  openMempool: () => Promise<MempoolStore>,
  openReputation: () => Promise<ReputationStore>,
): Layer.Layer<MempoolStoreService | ReputationStoreService> =>
  Layer.effect(ReputationStoreService, scopedStore(openReputation)).pipe(
    Layer.provideMerge(Layer.effect(MempoolStoreService, scopedStore(openMempool))),
  );

/** Mempool and reputation in one SQLite file (`:memory:` keeps nothing), opened and closed with the scope. */
export const sqliteStores = (filename: string): Layer.Layer<MempoolStoreService | ReputationStoreService> =>
  storesInOrder(
    () => createSqliteMempoolStore({ filename }),
    () => createSqliteReputationStore({ filename }),
  );

/** Mempool and reputation in PostgreSQL (shared by every engine on the database), opened and closed with the scope. */
export const postgresStores = (connectionString: string): Layer.Layer<MempoolStoreService | ReputationStoreService> =>
  storesInOrder(
    () => createPostgresMempoolStore({ connectionString }),
    () => createPostgresReputationStore({ connectionString }),
  );
