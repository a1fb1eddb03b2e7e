import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "@bundlekit/core";
import { fixtureEntry } from "@bundlekit/core/testing";
import Database from "better-sqlite3";
import { SqliteDialect } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { createKyselyMempoolStore, createSqliteMempoolStore, DatabaseUnavailableError } from "../src/index.ts";
import { guardSqliteFile } from "../src/sqlite-file-guard.ts";

const isRoot = process.getuid?.() === 0;
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) {
    setWritable(directory, true);
    rmSync(directory, { recursive: true, force: true });
  }
});

/** A fresh temporary directory and the database file to open in it. */
function databaseFile(): { directory: string; filename: string } {
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-faults-"));
  directories.push(directory);
  return { directory, filename: join(directory, "bundler.db") };
}

/**
 * Make the directory and the database's files refuse writes, as the operating system does it.
 * A user gets modes (0444/0555); root ignores modes, so root sets the immutable flag, which the
 * kernel enforces even for root.
 */
function setWritable(directory: string, writable: boolean): void {
  const files = ["bundler.db", "bundler.db-wal", "bundler.db-shm"].map((name) => join(directory, name)).filter(existsSync);
  if (isRoot) {
    spawnSync("chattr", [writable ? "-i" : "+i", ...files, directory]);
  } else {
    for (const file of files) chmodSync(file, writable ? 0o644 : 0o444);
    chmodSync(directory, writable ? 0o755 : 0o555);
  }
}

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields: unknown }[] } {
  const lines: { level: string; message: string; fields: unknown }[] = [];
  const at = (level: string) => (message: string, fields?: unknown) => void lines.push({ level, message, fields });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
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
        failure = await store.add(await fixtureEntry({ sender })).then(() => undefined, (error: unknown) => error);
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
      await expect(store.checkWritable()).rejects.toMatchObject({ code: "SQLITE_READONLY", message: "attempt to write a readonly database" });
      await expect(store.add(await fixtureEntry())).rejects.toMatchObject({ code: "SQLITE_READONLY" });
      database.pragma("query_only = 0");
      await store.checkWritable();
    } finally {
      await store.close();
    }
  });

  it("files made read-only after open refuse every call with the file and the cause, logged once, until they are writable again", async () => {
    const { directory, filename } = databaseFile();
    const logger = recordingLogger();
    const store = await createSqliteMempoolStore({ filename, logger });
    try {
      const entry = await fixtureEntry();
      await store.add(entry);
      setWritable(directory, false);
      const refused = await store.add(await fixtureEntry({ sender: 1 })).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DatabaseUnavailableError);
      expect((refused as Error).message).toMatch(
        new RegExp(`^the database file ${filename} is not writable \\(${filename}(-wal|-shm)?: (EPERM|EACCES|EROFS)\\)$`),
      );
      await expect(store.checkWritable()).rejects.toThrow(DatabaseUnavailableError);
      await expect(store.get(entry.userOpHash)).rejects.toThrow(DatabaseUnavailableError);
      expect(logger.lines).toEqual([
        { level: "error", message: "database unavailable", fields: { file: filename, reason: (refused as DatabaseUnavailableError).reason } },
      ]);

      setWritable(directory, true);
      await store.checkWritable();
      await store.add(await fixtureEntry({ sender: 1 }));
      expect(logger.lines.slice(1)).toEqual([{ level: "info", message: "database available again", fields: { file: filename } }]);
    } finally {
      setWritable(directory, true);
      await store.close();
    }
  });

  it("a deleted database file refuses every call, naming the file and that it is gone", async () => {
    const { filename } = databaseFile();
    const store = await createSqliteMempoolStore({ filename });
    const kept = await fixtureEntry();
    await store.add(kept);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${filename}${suffix}`);
    const gone = `the database file ${filename} is gone: deleted while the service runs; what is written now would be lost on restart`;
    await expect(store.add(await fixtureEntry({ sender: 1 }))).rejects.toThrow(gone);
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
      await expect(store.add(await fixtureEntry())).rejects.toThrow(`the database file ${filename} was replaced while the service runs`);
    } finally {
      await store.close();
    }
  });

  it("an operation committed after its file was deleted is not acknowledged", async () => {
    const { filename } = databaseFile();
    const database = new Database(filename);
    database.pragma("journal_mode = WAL");
    const store = await createKyselyMempoolStore({ db: guardSqliteFile(new SqliteDialect({ database }), filename) });
    try {
      // The file disappears inside the insert's transaction, after the check that precedes it:
      // the commit lands in the unlinked file.
      database.function("unlink_database", () => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${filename}${suffix}`, { force: true });
        return 0;
      });
      database.exec("create trigger unlink_on_insert after insert on user_operations begin select unlink_database(); end");
      await expect(store.add(await fixtureEntry())).rejects.toThrow(`the database file ${filename} is gone`);
    } finally {
      await store.close();
    }
  });

  // A process observation: SIGBUS ends the process that receives it. Only root can set the
  // immutable flag, the fault that leaves SQLite's mapped `-shm` index unwritable under a
  // running process (a mode change does not affect an open mapping).
  it.runIf(isRoot)("claiming, sending and closing with unwritable files report the fault, and the process exits cleanly (no SIGBUS)", () => {
    const { directory, filename } = databaseFile();
    const script = `import { spawnSync } from "node:child_process";
import { fixtureEntry } from "@bundlekit/core/testing";
import { createSqliteMempoolStore } from "@bundlekit/storage-kysely";
const filename = ${JSON.stringify(filename)};
const store = await createSqliteMempoolStore({ filename });
await store.add(await fixtureEntry());
spawnSync("chattr", ["+i", filename, filename + "-wal", filename + "-shm", ${JSON.stringify(directory)}]);
const outcome = (promise) => promise.then(() => "ok", (error) => error.name + ": " + error.message);
const entry = await fixtureEntry({ sender: 1 });
console.log(await outcome(store.claimForBundle({ entryPoint: entry.entryPoint, limit: 10, claimant: "a", leaseMs: 1000, now: 1 })));
console.log(await outcome(store.add(entry)));
await store.close();
process.exit(0);
`;
    const child = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", "--input-type=module", "--eval", script], {
      cwd: join(import.meta.dirname, ".."),
      encoding: "utf8",
    });
    expect({ signal: child.signal, status: child.status, stderr: child.stderr }).toEqual({ signal: null, status: 0, stderr: "" });
    expect(child.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^DatabaseUnavailableError: the database file .* is not writable \(.*: EPERM\)$/),
      expect.stringMatching(/^DatabaseUnavailableError: the database file .* is not writable \(.*: EPERM\)$/),
    ]);
  });
});
