import { setTimeout as sleep } from "node:timers/promises";
import { type Kysely, PostgresAdapter, SqliteAdapter, sql } from "kysely";
type Work<DB, T> = (db: Kysely<DB>) => Promise<T>;

/** How a backend keeps writes from interleaving: the one place the SQL store differs per dialect. */
export interface WriteTransactions<DB> {
  /** Run `work` in a transaction. */
  write<T>(work: Work<DB, T>): Promise<T>;
  /**
   * Run `work` in a transaction that no other `exclusive` one with the same `key` runs alongside,
   * in any process sharing the database: claims per EntryPoint, admissions per sender.
   */
  exclusive<T>(key: string, work: Work<DB, T>): Promise<T>;
  /**
   * Throw unless the database accepts a write to `table` now: an empty insert in a committed
   * transaction, which takes the write lock (SQLite) and checks the insert privilege
   * (PostgreSQL) while changing nothing.
   */
  probe(table: string): Promise<void>;
}

/** The write transactions of `db`'s dialect: SQLite (better-sqlite3) or PostgreSQL. */
export function writeTransactionsFor<DB>(
  db: Kysely<DB>,
  options: { busyTimeoutMs: number },
): WriteTransactions<DB> {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return postgresTransactions(db);
  if (adapter instanceof SqliteAdapter) return sqliteTransactions(db, options.busyTimeoutMs);
  throw new Error(
    `the Kysely stores support SQLite and PostgreSQL, not ${adapter.constructor.name}`,
  );
}

/**
 * PostgreSQL: claims take a transaction-scoped advisory lock per EntryPoint (and schema), then
 * read and update under READ COMMITTED, whose statements see everything committed before the
 * lock was granted. Admissions do the same per sender, so the policy decides on the sender's
 * operations as they are when the new one goes in (one winner per sender and nonce, the
 * per-sender limit held); distinct senders admit in parallel. A hash collision between two keys
 * only makes them wait for each other.
 *
 * Why not `SELECT … FOR UPDATE SKIP LOCKED` alone: it keeps two claimants off the same row, not
 * off the same sender. Claimant A can lock a sender's nonce 0 while B skips it and locks nonce 1;
 * and neither sees the other's uncommitted claims when skipping busy senders. Serialising the
 * claims of one EntryPoint makes "one operation per sender" hold trivially; a claim is a few
 * milliseconds, far below the bundle interval, so the lock costs no throughput that matters.
 * Other writers (mark*, drop, …) take only row locks; the claim's UPDATE re-checks each row's
 * status after any such lock, so a row that changed meanwhile is left out, and so does an
 * admission's replacement of a row a claim took meanwhile.
 */
function postgresTransactions<DB>(db: Kysely<DB>): WriteTransactions<DB> {
  const write = <T>(work: Work<DB, T>) =>
    inTransaction(db, (connection) => sql`begin`.execute(connection), work);
  return {
    write,
    // READ COMMITTED whatever the database's default: a statement must see what was committed
    // while it waited for the lock, which a snapshot taken before the wait would not.
    exclusive: (key, work) =>
      inTransaction(db, (connection) => sql`begin isolation level read committed`.execute(connection), async (trx) => {
        // One lock per key and schema (separate schemas may hold separate mempools). The prefix is
        // the claims' of older versions, kept so that a claim still excludes an older engine's.
        const lock = sql`concat('bundlekit.claim:', current_schema(), ':', ${key}::text)`;
        await sql`select pg_advisory_xact_lock(hashtext(${lock}))`.execute(trx);
        return work(trx);
      }),
    probe: (table) => write((trx) => emptyInsert(trx, table)),
  };
}

/**
 * SQLite: every write is a `BEGIN IMMEDIATE` transaction, which takes the database's write lock
 * up front, so a claim's or admission's read and update see no other writer in between, in any
 * process. Within one Kysely instance, Kysely's connection mutex already queues callers (SQLite
 * has one connection). Across instances the lock may be taken. better-sqlite3 can only wait for it
 * synchronously (its `timeout`), which would freeze a process whose other instance holds the lock
 * across an `await`; so the store retries with an async backoff instead, and works best with the
 * driver's own busy timeout at 0 (`createSqliteMempoolStore` sets it).
 */
function sqliteTransactions<DB>(db: Kysely<DB>, busyTimeoutMs: number): WriteTransactions<DB> {
  const write = <T>(work: Work<DB, T>) =>
    inTransaction(db, (connection) => beginImmediate(connection, busyTimeoutMs), work);
  // The write lock covers the whole database, so an exclusive transaction needs nothing more.
  return {
    write,
    exclusive: (_key, work) => write(work),
    probe: (table) => write((trx) => emptyInsert(trx, table)),
  };
}

/**
 * `work` between `begin` and `commit` on one connection. A failed rollback never hides the
 * error that caused it: SQLite ends the transaction itself on some errors (`SQLITE_FULL`,
 * `SQLITE_IOERR`, …), after which `rollback` fails with "no transaction is active"; and on a lost
 * PostgreSQL connection the rollback fails too. (Kysely's own `transaction()` throws the
 * rollback's error instead.)
 */
function inTransaction<DB, T>(
  db: Kysely<DB>,
  begin: (connection: Kysely<DB>) => Promise<unknown>,
  work: Work<DB, T>,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    await begin(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
}

/** An insert of no rows: needs the write lock and the privilege, changes nothing. */
async function emptyInsert<DB>(trx: Kysely<DB>, table: string): Promise<void> {
  await sql`insert into ${sql.table(table)} select * from ${sql.table(table)} where 1 = 0`.execute(trx);
}

function beginImmediate<DB>(connection: Kysely<DB>, busyTimeoutMs: number): Promise<unknown> {
  return whileBusy(() => sql`begin immediate`.execute(connection), busyTimeoutMs);
}

/**
 * SQLite: `attempt`, again with an async backoff while it fails with `SQLITE_BUSY*` (another
 * connection holds the lock it needs), for up to `busyTimeoutMs`; then its error. The event
 * loop keeps running meanwhile, so another connection of this process can finish and let go.
 */
export async function whileBusy<T>(attempt: () => T | Promise<T>, busyTimeoutMs: number): Promise<T> {
  const deadline = Date.now() + busyTimeoutMs;
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      await sleep(delayMs * (0.5 + Math.random()));
    }
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}
