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

/** One store's use of a database: the database as the store sees it, its write transactions, and the store's `close`. */
export interface StoreDatabase<Tables> {
  db: Kysely<Tables>;
  transactions: WriteTransactions<Tables>;
  /** Let go of the database; it is destroyed once every store on it has let go. A second call does nothing more. */
  close(): Promise<void>;
}

/** A database opened for the stores that share it. */
export interface SharedStoreDatabase {
  /**
   * The database for one more store, which reads only its own `Tables` (a wider schema narrows
   * safely). Each use counts until its `close()`.
   */
  use<Tables>(): StoreDatabase<Tables>;
}

/**
 * Open a database for the stores on it: one Kysely instance (one SQLite connection, one
 * PostgreSQL pool), migrated once unless told otherwise. It is destroyed when the last store
 * using it closes. If migrating fails the database is destroyed and the error rethrown.
 */
export async function openStoreDatabase<DB>(
  options: KyselyStoreOptions<DB>,
): Promise<SharedStoreDatabase> {
  // Each store's view of whatever wider schema `DB` the caller's instance has: Kysely's type is
  // invariant in its schema, so it goes through `Kysely<any>`, the type Kysely's own Migrator takes.
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const db: Kysely<any> =
    options.db instanceof Kysely ? options.db : new Kysely<DB>({ dialect: options.db });
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  let destroyed: Promise<void> | undefined;
  const destroy = () => (destroyed ??= db.destroy());
  try {
    if (options.migrate ?? true) await migrateToLatest(db, { busyTimeoutMs });
  } catch (error) {
    await destroy();
    throw error;
  }
  let users = 0;
  return {
    use<Tables>() {
      users++;
      let closed = false;
      const view: Kysely<Tables> = db;
      return {
        db: view,
        transactions: writeTransactionsFor(view, { busyTimeoutMs }),
        async close() {
          if (!closed) {
            closed = true;
            users--;
          }
          if (users === 0) await destroy();
        },
      };
    },
  };
}
