import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureEntry, replacingNothing } from "@bundlekit/testing";
import Database from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { getAddress } from "viem";
import { afterEach, describe, expect, inject, it } from "vitest";
import {
  createKyselyMempoolStore,
  createPostgresMempoolStore,
  createSqliteMempoolStore,
  DatabaseUnavailableError,
} from "../src/index.ts";
import { guardSqliteFile } from "../src/sqlite-file-guard.ts";
import { writeTransactionsFor } from "../src/write-transactions.ts";
import { isRoot, recordingLogger, setWritable, sqliteFiles } from "./file-faults.ts";

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) {
    setWritable(join(directory, "bundler.db"), true);
    rmSync(directory, { recursive: true, force: true });
  }
});

/** A fresh temporary directory and the database file to open in it. */
function databaseFile(): { directory: string; filename: string } {
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-faults-"));
  directories.push(directory);
  return { directory, filename: join(directory, "bundler.db") };
}

describe("storage faults on SQLite", () => {
  it("a write SQLite aborts itself (disk full) rejects with SQLite's error, not the failed rollback's", async () => {
    const database = new Database(":memory:");
    const store = await createKyselyMempoolStore({ db: new SqliteDialect({ database }) });
    try {
      // No page may be added: the next insert that needs one fails with SQLITE_FULL, and SQLite
      // rolls the transaction back itself.
      database.pragma(`max_page_count = ${database.pragma("page_count", { simple: true })}`);
      let failure: unknown;
      for (let sender = 0; sender < 200 && !failure; sender++) {
        failure = await store.admit(await fixtureEntry({ sender }), replacingNothing).then(
          () => undefined,
          (error: unknown) => error,
        );
      }
      expect(failure).toMatchObject({ code: "SQLITE_FULL", message: "database or disk is full" });
    } finally {
      await store.close();
    }
  });

  it("checkWritable rejects with SQLite's own error while the connection may not write, and resolves again after", async () => {
    const database = new Database(":memory:");
    const store = await createKyselyMempoolStore({ db: new SqliteDialect({ database }) });
    try {
      await store.checkWritable();
      database.pragma("query_only = 1");
      await expect(store.checkWritable()).rejects.toMatchObject({
        code: "SQLITE_READONLY",
        message: "attempt to write a readonly database",
      });
      await expect(store.admit(await fixtureEntry(), replacingNothing)).rejects.toMatchObject({
        code: "SQLITE_READONLY",
      });
      database.pragma("query_only = 0");
      await store.checkWritable();
    } finally {
      await store.close();
    }
  });

  it("files made read-only after open refuse every call with the file and the cause, logged once, until they are writable again", async () => {
    const { filename } = databaseFile();
    const logger = recordingLogger();
    const store = await createSqliteMempoolStore({ filename, logger });
    try {
      const entry = await fixtureEntry();
      await store.admit(entry, replacingNothing);
      setWritable(filename, false);
      const refused = await store
        .admit(await fixtureEntry({ sender: 1 }), replacingNothing)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DatabaseUnavailableError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          `^the database file ${filename} is not writable \\(${filename}(-wal|-shm)?: (EPERM|EACCES|EROFS)\\)$`,
        ),
      );
      await expect(store.checkWritable()).rejects.toThrow(DatabaseUnavailableError);
      await expect(store.get(entry.userOpHash)).rejects.toThrow(DatabaseUnavailableError);
      expect(logger.lines).toEqual([
        {
          level: "error",
          message: "database unavailable",
          fields: { file: filename, reason: (refused as DatabaseUnavailableError).reason },
        },
      ]);

      setWritable(filename, true);
      await store.checkWritable();
      await store.admit(await fixtureEntry({ sender: 1 }), replacingNothing);
      expect(logger.lines.slice(1)).toEqual([
        { level: "info", message: "database available again", fields: { file: filename } },
      ]);
    } finally {
      setWritable(filename, true);
      await store.close();
    }
  });

  it("a deleted database file refuses every call, naming the file and that it is gone", async () => {
    const { filename } = databaseFile();
    const store = await createSqliteMempoolStore({ filename });
    const kept = await fixtureEntry();
    await store.admit(kept, replacingNothing);
    for (const file of sqliteFiles(filename)) rmSync(file);
    const gone = `the database file ${filename} is gone: deleted while the service runs; what is written now would be lost on restart`;
    await expect(store.admit(await fixtureEntry({ sender: 1 }), replacingNothing)).rejects.toThrow(gone);
    await expect(store.checkWritable()).rejects.toThrow(gone);
    await expect(store.get(kept.userOpHash)).rejects.toThrow(gone);
    await store.close();
  });

  it("a database file replaced by another is refused", async () => {
    const { filename } = databaseFile();
    const store = await createSqliteMempoolStore({ filename });
    try {
      rmSync(filename);
      writeFileSync(filename, "");
      await expect(store.admit(await fixtureEntry(), replacingNothing)).rejects.toThrow(
        `the database file ${filename} was replaced while the service runs`,
      );
    } finally {
      await store.close();
    }
  });

  it("an operation committed after its file was deleted is not acknowledged", async () => {
    const { filename } = databaseFile();
    const database = new Database(filename);
    database.pragma("journal_mode = WAL");
    const store = await createKyselyMempoolStore({
      db: guardSqliteFile(new SqliteDialect({ database }), filename),
    });
    try {
      // The file disappears inside the insert's transaction, after the check that precedes it:
      // the commit lands in the unlinked file.
      database.function("unlink_database", () => {
        for (const file of sqliteFiles(filename)) rmSync(file, { force: true });
        return 0;
      });
      database.exec(
        "create trigger unlink_on_insert after insert on user_operations begin select unlink_database(); end",
      );
      await expect(store.admit(await fixtureEntry(), replacingNothing)).rejects.toThrow(
        `the database file ${filename} is gone`,
      );
    } finally {
      await store.close();
    }
  });

  // A process observation: SIGBUS ends the process that receives it. Only root can set the
  // immutable flag, the fault that leaves SQLite's mapped `-shm` index unwritable under a
  // running process (a mode change does not affect an open mapping).
  it.runIf(isRoot)(
    "claiming, sending and closing with unwritable files report the fault, and the process exits cleanly (no SIGBUS)",
    () => {
      const { directory, filename } = databaseFile();
      const script = `import { spawnSync } from "node:child_process";
import { fixtureEntry, replacingNothing } from "@bundlekit/testing";
import { createSqliteMempoolStore } from "@bundlekit/storage-kysely";
const filename = ${JSON.stringify(filename)};
const store = await createSqliteMempoolStore({ filename });
await store.admit(await fixtureEntry(), replacingNothing);
spawnSync("chattr", ["+i", filename, filename + "-wal", filename + "-shm", ${JSON.stringify(directory)}]);
const outcome = (promise) => promise.then(() => "ok", (error) => error.name + ": " + error.message);
const entry = await fixtureEntry({ sender: 1 });
console.log(await outcome(store.claimForBundle({ entryPoint: entry.entryPoint, limit: 10, claimant: "a", leaseMs: 1000, now: 1 })));
console.log(await outcome(store.admit(entry, replacingNothing)));
await store.close();
process.exit(0);
`;
      const child = spawnSync(
        process.execPath,
        ["--experimental-strip-types", "--no-warnings", "--input-type=module", "--eval", script],
        {
          cwd: join(import.meta.dirname, ".."),
          encoding: "utf8",
        },
      );
      expect({ signal: child.signal, status: child.status, stderr: child.stderr }).toEqual({
        signal: null,
        status: 0,
        stderr: "",
      });
      expect(child.stdout.trim().split("\n")).toEqual([
        expect.stringMatching(
          /^DatabaseUnavailableError: the database file .* is not writable \(.*: EPERM\)$/,
        ),
        expect.stringMatching(
          /^DatabaseUnavailableError: the database file .* is not writable \(.*: EPERM\)$/,
        ),
      ]);
    },
  );
});

describe("storage faults on PostgreSQL", () => {
  const connectionString = inject("postgresUrl");

  /** A fresh schema, migrated, and a role that may read and update its tables but not insert. */
  async function schemaWithoutInsert() {
    const id = randomUUID().replaceAll("-", "");
    const schema = `bundlekit_faults_${id}`;
    const role = `bundlekit_no_insert_${id}`;
    const admin = new pg.Pool({ connectionString, max: 1 });
    const asRole = new URL(connectionString);
    asRole.username = role;
    asRole.password = "";
    await admin.query(`create schema ${schema}`);
    await (
      await createPostgresMempoolStore({
        pool: new pg.Pool({ connectionString, options: `-c search_path=${schema}` }),
      })
    ).close();
    await admin.query(`create role ${role} login`);
    await admin.query(`grant usage on schema ${schema} to ${role}`);
    await admin.query(`grant select, update, delete on all tables in schema ${schema} to ${role}`);
    const store = await createPostgresMempoolStore({
      pool: new pg.Pool({ connectionString: asRole.href, options: `-c search_path=${schema}` }),
      migrate: false,
    });
    return {
      store,
      grantInsert: () => admin.query(`grant insert on all tables in schema ${schema} to ${role}`),
      async cleanup() {
        await store.close();
        await admin.query(`drop schema ${schema} cascade`);
        await admin.query(`drop role ${role}`);
        await admin.end();
      },
    };
  }

  it("a write the role may not make rejects with PostgreSQL's error, and checkWritable fails until the privilege is granted", async () => {
    const { store, grantInsert, cleanup } = await schemaWithoutInsert();
    try {
      const denied = { code: "42501", message: "permission denied for table user_operations" };
      await expect(store.admit(await fixtureEntry(), replacingNothing)).rejects.toMatchObject(denied);
      await expect(store.checkWritable()).rejects.toMatchObject(denied);
      await grantInsert();
      await store.checkWritable();
      await store.admit(await fixtureEntry(), replacingNothing);
    } finally {
      await cleanup();
    }
  });

  it("a connection lost inside a claim rejects with PostgreSQL's error, not the failed rollback's, and the process lives on", async () => {
    const schema = `bundlekit_faults_${randomUUID().replaceAll("-", "")}`;
    const admin = new pg.Pool({ connectionString, max: 2 });
    await admin.query(`create schema ${schema}`);
    const store = await createPostgresMempoolStore({
      pool: new pg.Pool({ connectionString, options: `-c search_path=${schema}` }),
    });
    const lock = await admin.connect();
    try {
      const entry = await fixtureEntry();
      await store.admit(entry, replacingNothing);
      // Hold the claim lock of the entry's EntryPoint, so the store's claim waits inside its
      // transaction; then end that backend, as a server restart or an administrator would.
      await lock.query("begin");
      await lock.query(
        "select pg_advisory_xact_lock(hashtext(concat('bundlekit.claim:', $1::text, ':', $2::text)))",
        [schema, getAddress(entry.entryPoint)],
      );
      const claim = store
        .claimForBundle({
          entryPoint: entry.entryPoint,
          limit: 1,
          claimant: "a",
          leaseMs: 1000,
          now: 1,
        })
        .then(
          () => "claimed",
          (error: unknown) => error,
        );
      const waiting =
        "select pid from pg_stat_activity where wait_event_type = 'Lock' and query like '%pg_advisory_xact_lock%' and pid <> $1";
      const lockPid = (await lock.query("select pg_backend_pid() as pid")).rows[0].pid;
      await expect.poll(async () => (await admin.query(waiting, [lockPid])).rowCount).toBe(1);
      await admin.query(`select pg_terminate_backend(pid) from (${waiting}) as w`, [lockPid]);
      expect(await claim).toMatchObject({
        code: "57P01",
        message: "terminating connection due to administrator command",
      });
      await lock.query("rollback");
      expect(
        await store.claimForBundle({
          entryPoint: entry.entryPoint,
          limit: 1,
          claimant: "a",
          leaseMs: 1000,
          now: 1,
        }),
      ).toHaveLength(1);
    } finally {
      lock.release();
      await store.close();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  });

  it("a store's pool survives a connection that breaks while checked out, with PostgreSQL's error for the statement", async () => {
    const pool = new pg.Pool({ connectionString, max: 1 });
    const store = await createPostgresMempoolStore({ pool, migrate: false });
    // The same pool under a plain Kysely instance, to end a connection in the middle of a transaction.
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    const transactions = writeTransactionsFor(db, { busyTimeoutMs: 0 });
    try {
      await expect(
        transactions.write((trx) =>
          sql`select pg_terminate_backend(pg_backend_pid())`.execute(trx),
        ),
      ).rejects.toMatchObject({
        code: "57P01",
        message: "terminating connection due to administrator command",
      });
      await transactions.write((trx) => sql`select 1`.execute(trx)); // a new connection
    } finally {
      await store.close();
    }
  });
});
