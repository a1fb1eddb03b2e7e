import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureEntry, reputationStoreContract } from "@bundlekit/core/testing";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { Migrator } from "kysely/migration";
import pg from "pg";
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

reputationStoreContract("SQLite file", async () => {
  const directory = await mkdtemp(join(tmpdir(), "bundlekit-reputation-"));
  const open = () => createSqliteReputationStore({ filename: join(directory, "bundler.db") });
  return {
    store: await open(),
    reopen: open,
    openAnother: open,
    cleanup: () => rm(directory, { recursive: true, force: true }),
  };
});

reputationStoreContract("SQLite :memory:", async () => ({
  store: await createSqliteReputationStore({ filename: ":memory:" }),
}));

const connectionString =
  process.env.BUNDLEKIT_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

reputationStoreContract("PostgreSQL", async () => {
  const admin = new pg.Pool({ connectionString, max: 1 });
  const schema = `bundlekit_test_${randomUUID().replaceAll("-", "")}`;
  const cleanup = async () => {
    try {
      await admin.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await admin.end();
    }
  };
  const open = () =>
    createPostgresReputationStore({
      pool: new pg.Pool({ connectionString, options: `-c search_path=${schema}` }),
    });
  try {
    await admin.query(`create schema ${schema}`);
    return { store: await open(), reopen: open, openAnother: open, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
});

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
