import { PostgresDialect } from "kysely";
import pg from "pg";
import { createKyselyMempoolStore, type KyselyMempoolStore } from "./kysely-mempool-store.ts";
import { createKyselyPreconfirmationStore, type KyselyPreconfirmationStore } from "./kysely-preconfirmation-store.ts";
import {
  createKyselyReputationStore,
  type KyselyReputationStore,
} from "./kysely-reputation-store.ts";
import { createKyselyStores, type KyselyStores } from "./kysely-stores.ts";

/** Options of `createPostgresMempoolStore`: where to connect, and whether to migrate. */
export type PostgresMempoolStoreOptions = (
  | {
      /** E.g. `postgres://user@host:5432/bundler`; opens a pool of its own. */
      connectionString: string;
    }
  | {
      /** A pool to use; `close()` ends it. */
      pool: pg.Pool;
    }
) & {
  /** Run the migrations on open. Default true. */
  migrate?: boolean;
};

/**
 * A mempool store in PostgreSQL: for several engine instances (machines) sharing one mempool.
 * The tables go to the first schema of the connection's `search_path`.
 */
export async function createPostgresMempoolStore(
  options: PostgresMempoolStoreOptions,
): Promise<KyselyMempoolStore> {
  const pool = poolOf(options);
  return createKyselyMempoolStore({ db: new PostgresDialect({ pool }), migrate: options.migrate });
}

/** A reputation store in PostgreSQL, shared by the engine instances that share a mempool. */
export async function createPostgresReputationStore(
  options: PostgresMempoolStoreOptions,
): Promise<KyselyReputationStore> {
  const pool = poolOf(options);
  return createKyselyReputationStore({
    db: new PostgresDialect({ pool }),
    migrate: options.migrate,
  });
}

/** A preconfirmation store in PostgreSQL: every engine on the database sees the promises of the others. */
export function createPostgresPreconfirmationStore(options: PostgresMempoolStoreOptions): Promise<KyselyPreconfirmationStore> {
  return createKyselyPreconfirmationStore({ db: new PostgresDialect({ pool: poolOf(options) }), migrate: options.migrate });
}

/**
 * The mempool, reputation and preconfirmation stores in PostgreSQL on one pool: the schema migrated once, the
 * pool ended once both stores are closed, or at `close()`.
 */
export async function createPostgresStores(options: PostgresMempoolStoreOptions): Promise<KyselyStores> {
  return createKyselyStores({ db: new PostgresDialect({ pool: poolOf(options) }), migrate: options.migrate });
}

/**
 * The store's pool. A connection that breaks while a store holds it (the server restarted, the
 * backend was terminated) fails the statement in flight with the server's error, and then
 * emits `error` on its client, which pg's pool listens to only while the client is idle: with
 * no listener that event would end the process. Each client gets one for its whole life.
 */
function poolOf(options: PostgresMempoolStoreOptions): pg.Pool {
  const pool =
    "pool" in options ? options.pool : new pg.Pool({ connectionString: options.connectionString });
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}
