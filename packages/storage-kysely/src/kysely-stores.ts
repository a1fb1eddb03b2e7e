import { type KyselyMempoolStore, mempoolStoreOn } from "./kysely-mempool-store.ts";
import { type KyselyReputationStore, reputationStoreOn } from "./kysely-reputation-store.ts";
import { type KyselyStoreOptions, openStoreDatabase } from "./open-store-database.ts";
import type { MempoolDatabase, ReputationDatabase } from "./schema.ts";

/** Options of `createKyselyStores`: the database both stores share, and whether to migrate it. */
export type KyselyStoresOptions<
  DB extends MempoolDatabase & ReputationDatabase = MempoolDatabase & ReputationDatabase,
> = KyselyStoreOptions<DB>;

/**
 * The mempool and reputation stores on one database. They share its connection (SQLite) or pool
 * (PostgreSQL), which closes once both stores are closed, or at `close()`.
 */
export interface KyselyStores {
  /** The mempool store; `close()` lets go of the database. */
  mempool: KyselyMempoolStore;
  /** The reputation store; `close()` lets go of the database. */
  reputation: KyselyReputationStore;
  /** Throw unless both stores' tables accept a write now (a write that changes nothing; for health checks). */
  checkWritable(): Promise<void>;
  /** Close both stores and the database they share. */
  close(): Promise<void>;
}

/**
 * Both stores on one Kysely database (see `createKyselyMempoolStore` for `db`), migrated once.
 * If opening or migrating fails, the database is destroyed and the error rethrown.
 */
export async function createKyselyStores<DB extends MempoolDatabase & ReputationDatabase>(
  options: KyselyStoresOptions<DB>,
): Promise<KyselyStores> {
  const database = await openStoreDatabase(options);
  const mempool = mempoolStoreOn(database.use());
  const reputation = reputationStoreOn(database.use());
  return {
    mempool,
    reputation,
    async checkWritable() {
      await mempool.checkWritable();
      await reputation.checkWritable();
    },
    async close() {
      await Promise.all([mempool.close(), reputation.close()]);
    },
  };
}
