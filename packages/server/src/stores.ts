import type { Logger } from "@bundlekit/core";
import {
  createPostgresStores,
  createSqliteStores,
  type KyselyMempoolStore,
  type KyselyPreconfirmationStore,
  type KyselyReputationStore,
} from "@bundlekit/storage-kysely";
import pg from "pg";
import { ConfigError } from "./config.ts";
import { describeDatabase, isPostgresDatabase, postgresPassword } from "./database-url.ts";

/** The mempool, reputation and preconfirmation stores the service runs on. */
export interface ServiceStores {
  store: KyselyMempoolStore;
  reputation: KyselyReputationStore;
  preconfirmations: KyselyPreconfirmationStore;
  /**
   * Resolves while every store can write (a write probe that changes nothing, see
   * `checkWritable`); rejects with the reason, without the database's password, when any
   * cannot. Concurrent calls share one probe. Logs when the answer changes.
   */
  checkHealth(): Promise<void>;
  /** Close every store and the connection (SQLite) or pool (PostgreSQL) they share. */
  close(): Promise<void>;
}

/** How long opening a PostgreSQL connection may take before start-up fails. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Open the stores `database` names: a PostgreSQL URL (`postgres://…`, shared by every service on
 * it; a pool of at most `poolSize` connections) or a SQLite file (`:memory:` for none). Migrates
 * them. A database that cannot be opened is a `ConfigError` naming it without its password.
 */
export async function openStores(database: string, logger: Logger, options: { poolSize?: number } = {}): Promise<ServiceStores> {
  try {
    // One connection (SQLite) or pool (PostgreSQL) for every store, migrated once.
    const stores = isPostgresDatabase(database)
      ? await createPostgresStores({ pool: postgresPool(database, logger, options.poolSize) })
      : await createSqliteStores({ filename: database, logger });
    return { store: stores.mempool, reputation: stores.reputation, preconfirmations: stores.preconfirmations, checkHealth: healthCheck(database, stores, logger), close: stores.close };
  } catch (error) {
    throw new ConfigError(`cannot open the database ${describeDatabase(database)}: ${faultReason(error, database)}`);
  }
}

/** The first line of a database error, without the database's password. */
function faultReason(error: unknown, database: string): string {
  const { message, code } = error as { message?: string; code?: string };
  let reason = message?.split("\n")[0] || code || String(error);
  for (const password of postgresPassword(database)) reason = reason.replaceAll(password, "***");
  return reason;
}

/** `ServiceStores.checkHealth`: one write probe at a time on every store, logging each change of the answer. */
function healthCheck(database: string, stores: { checkWritable(): Promise<void> }, logger: Logger) {
  let running: Promise<void> | undefined;
  let lastFault: string | undefined;
  const probe = async () => {
    let fault: string | undefined;
    try {
      await stores.checkWritable();
    } catch (error) {
      fault = faultReason(error, database);
    }
    if (fault !== lastFault) {
      if (fault) logger.error("the database cannot write", { database: describeDatabase(database), reason: fault });
      else logger.info("the database can write again", { database: describeDatabase(database) });
      lastFault = fault;
    }
    if (fault) throw new Error(fault);
  };
  return () => {
    running ??= probe().finally(() => {
      running = undefined;
    });
    return running;
  };
}

/** The stores' pool of at most `max` connections: connecting times out, and an idle connection that breaks is logged, not fatal. */
function postgresPool(connectionString: string, logger: Logger, max: number | undefined): pg.Pool {
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...(max === undefined ? {} : { max }) });
  // An idle connection that breaks (the server restarted) is replaced on next use; without a
  // listener the pool's error event would end the process.
  pool.on("error", (error) => logger.warn("database connection lost", { error: error.message.split("\n")[0] }));
  return pool;
}
