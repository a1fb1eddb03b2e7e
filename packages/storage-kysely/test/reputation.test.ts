
import { fixtureEntry, reputationStoreContract } from "@bundlekit/core/testing";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { Migrator } from "kysely/migration";
import { describe, expect, it } from "vitest";
import {
  createKyselyMempoolStore,
  createPostgresReputationStore,
  createSqliteReputationStore,
  type MempoolDatabase,
  mempoolMigrations,
  migrateToLatest,
} from "../src/index.ts";
import { toRow } from "../src/rows.ts";
import { onPostgresSchema, onSqliteFile } from "./backends.ts";

reputationStoreContract("SQLite file", () => onSqliteFile((filename) => createSqliteReputationStore({ filename })));

reputationStoreContract("SQLite :memory:", async () => ({
  store: await createSqliteReputationStore({ filename: ":memory:" }),
}));

reputationStoreContract("PostgreSQL", () => onPostgresSchema((pool) => createPostgresReputationStore({ pool })));

describe("migration 0002_dropped_status", () => {
  it("turns replaced operations of an older schema from failed into dropped, and nothing else", async () => {
    const db = new Kysely<MempoolDatabase>({
      dialect: new SqliteDialect({ database: new Database(":memory:") }),
    });
    try {
      const migrator = new Migrator({
        db,
        provider: { getMigrations: async () => ({ ...mempoolMigrations }) },
        migrationTableName: "bundlekit_mempool_migration",
        migrationLockTableName: "bundlekit_mempool_migration_lock",
      });
      expect((await migrator.migrateTo("0001_mempool")).error).toBeUndefined();
      const [replaced, reverted] = await Promise.all([
        fixtureEntry({ sender: 1 }),
        fixtureEntry({ sender: 2 }),
      ]);
      await db
        .insertInto("user_operations")
        .values([
          { ...toRow(replaced), status: "failed", failure_reason: "replaced by 0xabc" },
          { ...toRow(reverted), status: "failed", failure_reason: "bundle transaction reverted" },
        ])
        .execute();
      await migrateToLatest(db);
      const store = await createKyselyMempoolStore({ db, migrate: false });
      expect(await store.get(replaced.userOpHash)).toMatchObject({
        status: "dropped",
        failureReason: "replaced by 0xabc",
      });
      expect(await store.get(reverted.userOpHash)).toMatchObject({ status: "failed" });
    } finally {
      await db.destroy();
    }
  });
});
