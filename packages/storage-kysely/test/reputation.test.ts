
import type { NewMempoolEntry } from "@bundlekit/core";
import { fixtureEntry, fixtureFactory, fixturePaymaster, reputationStoreContract } from "@bundlekit/testing";
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
      const migrator = mempoolMigrator(db);
      expect((await migrator.migrateTo("0001_mempool")).error).toBeUndefined();
      const [replaced, reverted] = await Promise.all([
        fixtureEntry({ sender: 1 }),
        fixtureEntry({ sender: 2 }),
      ]);
      await db
        .insertInto("user_operations")
        .values([
          { ...rowBeforeEntities(replaced), status: "failed", failure_reason: "replaced by 0xabc" },
          { ...rowBeforeEntities(reverted), status: "failed", failure_reason: "bundle transaction reverted" },
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

/** A migrator of the mempool schema on `db`, to bring it to an older version first. */
function mempoolMigrator(db: Kysely<MempoolDatabase>) {
  return new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...mempoolMigrations }) },
    migrationTableName: "bundlekit_mempool_migration",
    migrationLockTableName: "bundlekit_mempool_migration_lock",
  });
}

/** The row of `entry` as the schema before migration 0005 had it: no entity columns. */
function rowBeforeEntities(entry: NewMempoolEntry) {
  const { factory: _factory, paymaster: _paymaster, ...row } = toRow(entry);
  return row;
}

describe("migration 0005_entities", () => {
  it("fills the factory and paymaster of operations stored before it, so listByEntity finds them", async () => {
    const db = new Kysely<MempoolDatabase>({ dialect: new SqliteDialect({ database: new Database(":memory:") }) });
    try {
      const migrator = mempoolMigrator(db);
      expect((await migrator.migrateTo("0004_validation_facts")).error).toBeUndefined();
      const [sponsored, plain] = await Promise.all([fixtureEntry({ sender: 1, sponsored: true }), fixtureEntry({ sender: 2 })]);
      await db.insertInto("user_operations").values([rowBeforeEntities(sponsored), rowBeforeEntities(plain)]).execute();
      await migrateToLatest(db);
      const store = await createKyselyMempoolStore({ db, migrate: false });
      for (const entity of [fixturePaymaster, fixtureFactory]) {
        expect((await store.listByEntity(sponsored.entryPoint, entity)).map((e) => e.userOpHash)).toEqual([sponsored.userOpHash]);
      }
    } finally {
      await db.destroy();
    }
  });
});
