import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  createSqliteMempoolStore,
  createSqliteReputationStore,
  mempoolMigrations,
} from "../src/index.ts";
import { postgresSchemas, sqliteFiles } from "./backends.ts";

/** The tables the migrations create, bookkeeping included. */
const tables = [
  "bundlekit_mempool_migration",
  "bundlekit_mempool_migration_lock",
  "preconfirmations",
  "reputation",
  "reputation_decay",
  "user_operations",
];
const migrationNames = Object.keys(mempoolMigrations).sort();

/**
 * What `processes` processes print when each opens both stores on `database` (two connections
 * each) at the same moment: all started, and ready, before any is told to go.
 */
async function openAtOnce(database: string, processes: number): Promise<string[]> {
  const children = Array.from({ length: processes }, () =>
    spawn(
      process.execPath,
      [
        "--experimental-strip-types",
        "--no-warnings",
        join(import.meta.dirname, "open-stores-process.ts"),
        database,
      ],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    ),
  );
  const outputs = children.map((child) => {
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
    });
    return {
      ready: () => text.startsWith("ready\n"),
      rest: () => text.slice("ready\n".length).trim(),
    };
  });
  await expect.poll(() => outputs.every((output) => output.ready())).toBe(true);
  for (const child of children) child.stdin.write("go\n");
  await Promise.all(
    children.map((child) => (child.exitCode === null ? once(child, "exit") : undefined)),
  );
  return outputs.map((output) => output.rest());
}

/** The names a query on a SQLite file returns, sorted; read through a connection of its own. */
function namesIn(filename: string, query: string): string[] {
  const file = new Database(filename, { readonly: true });
  try {
    return (file.prepare(query).all() as { name: string }[]).map((row) => row.name).sort();
  } finally {
    file.close();
  }
}
const tablesQuery = "select name from sqlite_master where type = 'table'";

describe("migrations run once per database, whoever opens it first", () => {
  const { newFile } = sqliteFiles("bundlekit-migrate");

  it("three processes opening both stores on one new SQLite file at once all open, on one schema migrated once", async () => {
    for (let round = 0; round < 3; round++) {
      const filename = newFile();
      expect(await openAtOnce(filename, 3)).toEqual(["opened", "opened", "opened"]);
      expect(namesIn(filename, tablesQuery)).toEqual(tables);
      expect(namesIn(filename, "select name from bundlekit_mempool_migration")).toEqual(
        migrationNames,
      );
    }
  });

  it("both stores opened at once in one process on one new SQLite file both open (each connection waits for the other's migration without blocking the process)", async () => {
    const filename = newFile();
    const stores = await Promise.all([
      createSqliteMempoolStore({ filename }),
      createSqliteReputationStore({ filename }),
    ]);
    for (const store of stores) await store.close();
    expect(namesIn(filename, tablesQuery)).toEqual(tables);
  });

  it("a migration that fails leaves the SQLite file as it was: no tables of ours, no bookkeeping", async () => {
    const filename = newFile();
    // Another application's table of the same name: the first migration cannot create ours.
    const foreign = new Database(filename);
    foreign.exec("create table user_operations (id integer primary key)");
    foreign.close();
    await expect(createSqliteMempoolStore({ filename })).rejects.toThrow(
      'table "user_operations" already exists',
    );
    expect(namesIn(filename, tablesQuery)).toEqual(["user_operations"]);
  });

  describe("on PostgreSQL", () => {
    const { admin, newSchema } = postgresSchemas("bundlekit_migrate");

    it("three processes opening both stores on one new schema at once all open, on one schema migrated once (Kysely's advisory lock)", async () => {
      for (let round = 0; round < 2; round++) {
        const { schema, url } = await newSchema();
        expect(await openAtOnce(url.toString(), 3)).toEqual(["opened", "opened", "opened"]);
        const names = async (sql: string) =>
          (await admin.query<{ name: string }>(sql, [schema])).rows.map((row) => row.name).sort();
        expect(
          await names(
            "select table_name as name from information_schema.tables where table_schema = $1",
          ),
        ).toEqual(tables);
        expect(
          await names(
            `select name from ${schema}.bundlekit_mempool_migration where $1::text is not null`,
          ),
        ).toEqual(migrationNames);
      }
    });
  });
});
