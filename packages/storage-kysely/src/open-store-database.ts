import { type Dialect, Kysely } from "kysely";
import { migrateToLatest } from "./migrations.ts";
import { type WriteTransactions, writeTransactionsFor } from "./write-transactions.ts";

/** How a Kysely-backed store gets its database. */
export interface KyselyStoreOptions<DB> {
  /**
   * The database: a Kysely instance, or a Kysely dialect to open one with (SQLite via
   * better-sqlite3, or PostgreSQL). The store owns it from here on: `close()` destroys it. To
   * share an application's instance, pass `db.withTables<…Database>()`.
   */
  db: Kysely<DB> | Dialect;
  /** Run `migrateToLatest` before returning the store. Default true. */
  migrate?: boolean;
  /** SQLite: how long a write waits for another connection's write lock before failing. Default 5000. */
  busyTimeoutMs?: number;
}

/**
 * Open a store's database and its write transactions, migrated unless told otherwise. A store
 * reads only its own `Tables`, so a wider database type narrows safely. If migrating fails the
 * database is destroyed and the error rethrown.
 */
export async function openStoreDatabase<Tables, DB extends Tables = Tables>(
  options: KyselyStoreOptions<DB>,
): Promise<{ db: Kysely<Tables>; transactions: WriteTransactions<Tables> }> {
  // The store's view of whatever wider schema `DB` the caller's instance has: Kysely's type is
  // invariant in its schema, so it goes through `Kysely<any>`, the type Kysely's own Migrator takes.
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const db: Kysely<Tables> = options.db instanceof Kysely ? (options.db as Kysely<any>) : new Kysely<Tables>({ dialect: options.db });
  const transactions = writeTransactionsFor(db, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000 });
  try {
    if (options.migrate ?? true) await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, transactions };
}
