import { type KyselyMempoolStore, mempoolStoreOn } from "./kysely-mempool-store.ts";
import { type KyselyPreconfirmationStore, preconfirmationStoreOn } from "./kysely-preconfirmation-store.ts";
import { type KyselyReputationStore, reputationStoreOn } from "./kysely-reputation-store.ts";
import { type KyselyStoreOptions, openStoreDatabase } from "./open-store-database.ts";
import type { MempoolDatabase, PreconfirmationDatabase, ReputationDatabase } from "./schema.ts";

/** Every table of the stores. */
type StoresDatabase = MempoolDatabase & ReputationDatabase & PreconfirmationDatabase;

/** Options of `createKyselyStores`: the database the stores share, and whether to migrate it. */
export type KyselyStoresOptions<DB extends StoresDatabase = StoresDatabase> = KyselyStoreOptions<DB>;

/**
 * The mempool, reputation and preconfirmation stores on one database. They share its connection
 * (SQLite) or pool (PostgreSQL), which closes once every store is closed, or at `close()`.
 */
export interface KyselyStores {
  /** The mempool store; `close()` lets go of the database. */
  mempool: KyselyMempoolStore;
  /** The reputation store; `close()` lets go of the database. */
  reputation: KyselyReputationStore;
  /** The preconfirmation store; `close()` lets go of the database. */
  preconfirmations: KyselyPreconfirmationStore;
  /** Throw unless every store's tables accept a write now (a write that changes nothing; for health checks). */
  checkWritable(): Promise<void>;
  /** Close every store and the database they share. */
  close(): Promise<void>;
}

/**
 * The stores on one Kysely database (see `createKyselyMempoolStore` for `db`), migrated once.
 * If opening or migrating fails, the database is destroyed and the error rethrown.
 */
export async function createKyselyStores<DB extends StoresDatabase>(
  options: KyselyStoresOptions<DB>,
): Promise<KyselyStores> {
  const database = await openStoreDatabase(options);
  const mempool = mempoolStoreOn(database.use());
  const reputation = reputationStoreOn(database.use());
  const preconfirmations = preconfirmationStoreOn(database.use());
  return {
    mempool,
    reputation,
    preconfirmations,
    async checkWritable() {
      await mempool.checkWritable();
      await reputation.checkWritable();
      await preconfirmations.checkWritable();
    },
    async close() {
      await Promise.all([mempool.close(), reputation.close(), preconfirmations.close()]);
    },
  };
}
