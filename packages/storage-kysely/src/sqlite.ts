import type { Logger } from "@bundlekit/core";
import Database from "better-sqlite3";
import { type Dialect, SqliteDialect } from "kysely";
import { createKyselyMempoolStore, type KyselyMempoolStore } from "./kysely-mempool-store.ts";
import {
  createKyselyReputationStore,
  type KyselyReputationStore,
} from "./kysely-reputation-store.ts";
import { createKyselyPreconfirmationStore, type KyselyPreconfirmationStore } from "./kysely-preconfirmation-store.ts";
import { createKyselyStores, type KyselyStores } from "./kysely-stores.ts";
import { guardSqliteFile } from "./sqlite-file-guard.ts";
import { whileBusy } from "./write-transactions.ts";

/** Options of `createSqliteMempoolStore` and `createSqliteReputationStore`. */
export interface SqliteMempoolStoreOptions {
  /** The database file, created if missing; `":memory:"` for a throwaway store. */
  filename: string;
  /** Run the migrations on open. Default true. */
  migrate?: boolean;
  /** How long a write waits for another connection's write lock. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** Where a fault of the file (deleted, replaced, not writable) is logged, once, and its end. Default silent. */
  logger?: Logger;
}

/**
 * A mempool store in one SQLite file (better-sqlite3): durable, no server, for a single machine.
 * Files use WAL mode, so readers never wait for the writer; several stores (processes) may open
 * the same file. Each use of the file checks that it is still the file opened, and writable
 * (`guardSqliteFile`): a deleted file fails every call with `DatabaseUnavailableError`.
 */
export function createSqliteMempoolStore(
  options: SqliteMempoolStoreOptions,
): Promise<KyselyMempoolStore> {
  return openSqlite(options, (dialect, busyTimeoutMs) =>
    createKyselyMempoolStore({ db: dialect, migrate: options.migrate, busyTimeoutMs }),
  );
}

/** A reputation store in one SQLite file; it may be the mempool store's file (see `createSqliteMempoolStore`). */
export function createSqliteReputationStore(
  options: SqliteMempoolStoreOptions,
): Promise<KyselyReputationStore> {
  return openSqlite(options, (dialect, busyTimeoutMs) =>
    createKyselyReputationStore({ db: dialect, migrate: options.migrate, busyTimeoutMs }),
  );
}

/** A preconfirmation store in one SQLite file; it may be the mempool store's file (see `createSqliteMempoolStore`). */
export function createSqlitePreconfirmationStore(options: SqliteMempoolStoreOptions): Promise<KyselyPreconfirmationStore> {
  return openSqlite(options, (dialect, busyTimeoutMs) => createKyselyPreconfirmationStore({ db: dialect, migrate: options.migrate, busyTimeoutMs }));
}

/**
 * The mempool, reputation and preconfirmation stores in one SQLite file, on one connection: the schema migrated
 * once, the file guarded once (see `createSqliteMempoolStore`), the connection closed once both
 * stores are closed, or at `close()`.
 */
export function createSqliteStores(options: SqliteMempoolStoreOptions): Promise<KyselyStores> {
  return openSqlite(options, (dialect, busyTimeoutMs) =>
    createKyselyStores({ db: dialect, migrate: options.migrate, busyTimeoutMs }),
  );
}

async function openSqlite<T>(
  options: SqliteMempoolStoreOptions,
  open: (dialect: Dialect, busyTimeoutMs: number) => Promise<T>,
): Promise<T> {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  // Every wait for the lock is asynchronous (see write-transactions.ts), switching to WAL and
  // migrating included: the driver's synchronous wait would freeze the process while another
  // connection of it holds the lock across an `await`. And SQLite answers two connections that
  // switch one new file to WAL at once with SQLITE_BUSY at once, without waiting at all.
  const database = new Database(options.filename, { timeout: 0 });
  const inFile = options.filename !== ":memory:" && options.filename !== "";
  try {
    if (inFile) await whileBusy(() => database.pragma("journal_mode = WAL"), busyTimeoutMs);
  } catch (error) {
    database.close();
    throw error;
  }
  const dialect = new SqliteDialect({ database });
  return open(inFile ? guardSqliteFile(dialect, options.filename, options.logger) : dialect, busyTimeoutMs);
}
