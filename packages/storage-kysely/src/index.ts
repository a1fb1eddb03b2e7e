// @bundlekit/storage-kysely: the engine's mempool, reputation and preconfirmation stores on Kysely. Named exports only.

// SQLite (the embedded default) and PostgreSQL (shared by several engines).
export {
  createSqliteMempoolStore,
  createSqlitePreconfirmationStore,
  createSqliteReputationStore,
  createSqliteStores,
  type SqliteMempoolStoreOptions,
} from "./sqlite.ts";
export {
  createPostgresMempoolStore,
  createPostgresPreconfirmationStore,
  createPostgresReputationStore,
  createPostgresStores,
  type PostgresMempoolStoreOptions,
} from "./postgres.ts";
export { DatabaseUnavailableError } from "./sqlite-file-guard.ts";

// On a Kysely instance of your own (any dialect the stores support).
export {
  createKyselyMempoolStore,
  type KyselyMempoolStore,
  type KyselyMempoolStoreOptions,
} from "./kysely-mempool-store.ts";
export {
  createKyselyReputationStore,
  type KyselyReputationStore,
  type KyselyReputationStoreOptions,
} from "./kysely-reputation-store.ts";
export {
  createKyselyPreconfirmationStore,
  type KyselyPreconfirmationStore,
  type KyselyPreconfirmationStoreOptions,
} from "./kysely-preconfirmation-store.ts";
export { createKyselyStores, type KyselyStores, type KyselyStoresOptions } from "./kysely-stores.ts";
export { type MigrateOptions, mempoolMigrations, migrateToLatest } from "./migrations.ts";
export type {
  Int64,
  MempoolDatabase,
  NullableInt64,
  PreconfirmationDatabase,
  PreconfirmationsTable,
  ReputationDatabase,
  ReputationDecayTable,
  ReputationTable,
  UserOperationsTable,
} from "./schema.ts";
