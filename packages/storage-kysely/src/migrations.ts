import { deserializeUserOperation, type EntryPointVersion } from "@bundlekit/core";
import { type DatabaseIntrospector, type Kysely, PostgresAdapter, SqliteAdapter, sql } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import { entityColumns } from "./rows.ts";
import { writeTransactionsFor } from "./write-transactions.ts";

/**
 * The schema's history, in order. Each migration is a value in code (no migration folder to
 * ship); never edit one that has been released: add the next.
 */
export const mempoolMigrations: Readonly<Record<string, Migration>> = {
  "0001_mempool": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("user_operations")
        .addColumn("hash", "text", (c) => c.primaryKey())
        .addColumn("entry_point", "text", (c) => c.notNull())
        .addColumn("entry_point_version", "text", (c) => c.notNull())
        .addColumn("sender", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("user_operation", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("received_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("claimed_by", "text")
        .addColumn("claimed_until", "bigint")
        .addColumn("transaction_hash", "text")
        .addColumn("block_hash", "text")
        .addColumn("block_number", "bigint")
        .addColumn("failure_reason", "text")
        .execute();
      // Listing and claiming: one status on one EntryPoint, oldest first.
      await db.schema
        .createIndex("user_operations_status_idx")
        .on("user_operations")
        .columns(["status", "entry_point", "received_at"])
        .execute();
      // Replacement lookups, and a sender's operations when claiming.
      await db.schema
        .createIndex("user_operations_sender_nonce_idx")
        .on("user_operations")
        .columns(["entry_point", "sender", "nonce"])
        .execute();
    },
  },
  "0002_dropped_status": {
    // Operations that left the pool without being sent are `dropped`, no longer `failed`. Only
    // replaced ones can be told apart in old rows: their reason names the replacement.
    async up(db: Kysely<unknown>) {
      await sql`update user_operations set status = 'dropped' where status = 'failed' and failure_reason like 'replaced by %'`.execute(
        db,
      );
    },
  },
  "0003_reputation": {
    async up(db: Kysely<unknown>) {
      // One row per entity address per EntryPoint; addresses in lower case (so order by address
      // is the same on every backend and collation).
      await db.schema
        .createTable("reputation")
        .addColumn("entry_point", "text", (c) => c.notNull())
        .addColumn("address", "text", (c) => c.notNull())
        .addColumn("ops_seen", "bigint", (c) => c.notNull())
        .addColumn("ops_included", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("reputation_pk", ["entry_point", "address"])
        .execute();
      // When the hourly decay last ran: one row.
      await db.schema
        .createTable("reputation_decay")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("decayed_at", "bigint", (c) => c.notNull())
        .execute();
    },
  },
  "0004_validation_facts": {
    // What safe validation learned (code hashes, storage touched), as JSON; null when unsafe.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("user_operations").addColumn("validation", "text").execute();
    },
  },
  "0005_entities": {
    // The factory and paymaster an operation names (checksummed; null when none), so per-entity
    // rules count an entity's operations without listing the pool. Filled for the rows a query
    // can still list: those in the pool, and included ones a reorg may return to it.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("user_operations").addColumn("factory", "text").execute();
      await db.schema.alterTable("user_operations").addColumn("paymaster", "text").execute();
      await db.schema.createIndex("user_operations_factory_idx").on("user_operations").columns(["entry_point", "factory"]).execute();
      await db.schema.createIndex("user_operations_paymaster_idx").on("user_operations").columns(["entry_point", "paymaster"]).execute();
      const rows = await sql<{ hash: string; entry_point_version: string; user_operation: string }>`
        select hash, entry_point_version, user_operation from user_operations
        where status in ('pending', 'bundling', 'submitted', 'included')`.execute(db);
      for (const row of rows.rows) {
        const { factory, paymaster } = entityColumns(deserializeUserOperation(row.user_operation, row.entry_point_version as EntryPointVersion));
        await sql`update user_operations set factory = ${factory}, paymaster = ${paymaster} where hash = ${row.hash}`.execute(db);
      }
    },
  },
  "0006_paymaster_context_size": {
    // Bytes of the paymaster's validation context (LIM-050); null without one.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("user_operations").addColumn("paymaster_context_size", "integer").execute();
    },
  },
  "0007_preconfirmations": {
    // Each operation's latest preconfirmation (pull mode), shared by the engines on the database.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("preconfirmations")
        .addColumn("user_op_hash", "text", (c) => c.primaryKey())
        .addColumn("entry_point", "text", (c) => c.notNull())
        .addColumn("chain_id", "bigint", (c) => c.notNull())
        .addColumn("block_number", "bigint", (c) => c.notNull())
        .addColumn("transaction_hash", "text", (c) => c.notNull())
        .addColumn("signer", "text", (c) => c.notNull())
        .addColumn("signature", "text")
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .execute();
    },
  },
};

const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...mempoolMigrations }),
};

/** Options of `migrateToLatest`. */
export interface MigrateOptions {
  /** SQLite: how long to wait for another connection's write lock (another process migrating) before failing. Default 5000. */
  busyTimeoutMs?: number;
}

/**
 * Bring the mempool, reputation and preconfirmation tables up to date. Idempotent, and safe when several processes
 * (or several connections of one) migrate one database at once, new or not: the first to take
 * the lock migrates, the others find the schema current.
 * - PostgreSQL: Kysely's migration lock, a session-level `pg_advisory_lock` held while the
 *   pending migrations are read and run in one transaction (the bookkeeping tables it creates
 *   first are `create … if not exists`, checked again on failure).
 * - SQLite: everything, bookkeeping included, in one `BEGIN IMMEDIATE` transaction, which holds
 *   the file's write lock; SQLite's DDL is transactional, so a failed migration leaves nothing.
 *   Kysely's Migrator takes no lock of its own there (it assumes one connection per file).
 * Bookkeeping goes to `bundlekit_mempool_migration*` tables, so an application's own Kysely
 * migrations can live in the same database.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, options: MigrateOptions = {}): Promise<void> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof SqliteAdapter) {
    const { write } = writeTransactionsFor(db, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000 });
    return write((connection) => runMigrator(connection, undefined));
  }
  const schema = await postgresSchema(db);
  return runMigrator(schema === undefined ? db : withIntrospectionOf(db, schema), schema);
}

/**
 * Kysely's Migrator on `db`, bookkeeping in `schema` (PostgreSQL) or the default one. On SQLite
 * `db` is one connection inside a write transaction: the Migrator nests its own use of the
 * connection in it and opens no transaction (Kysely counts SQLite's DDL as not transactional).
 */
async function runMigrator<DB>(db: Kysely<DB>, schema: string | undefined): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    migrationTableName: "bundlekit_mempool_migration",
    migrationLockTableName: "bundlekit_mempool_migration_lock",
    migrationTableSchema: schema,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    throw error instanceof Error ? error : new Error(`mempool migration failed: ${String(error)}`);
  }
}

/**
 * PostgreSQL: `db` as the Migrator sees it, with the tables it looks for listed from `schema`
 * alone. Kysely's own listing reads every schema in the database and fails ("schema … does not
 * exist") when another one is dropped while it runs: another application's, a test's.
 */
function withIntrospectionOf<DB>(db: Kysely<DB>, schema: string): Kysely<DB> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () => [{ name: schema }],
    getTables: async () => {
      const { rows } = await sql<{ name: string }>`
        select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db);
      return rows.map(({ name }) => ({ name, schema, isView: false, isForeign: false, columns: [] }));
    },
  };
  return new Proxy(db, {
    get(target, key) {
      if (key === "introspection") return introspection;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * PostgreSQL: the schema the tables go to (first on the `search_path`). Named explicitly because
 * the Migrator otherwise takes a bookkeeping table in any other schema for its own.
 */
async function postgresSchema<DB>(db: Kysely<DB>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(
    db,
  );
  return rows[0]?.schema ?? undefined;
}
