import { accessSync, constants, type Stats, statSync } from "node:fs";
import { resolve } from "node:path";
import { InfrastructureError, type Logger, silentLogger } from "@bundlekit/core";
import type { AbortableOperationOptions, CompiledQuery, DatabaseConnection, Dialect, Driver } from "kysely";

/**
 * The SQLite file a store writes to is unusable: deleted, replaced or not writable (-32603). The
 * message names the file and what happened; `reason` is that part alone.
 */
export class DatabaseUnavailableError extends InfrastructureError {
  override name = "DatabaseUnavailableError";
  readonly reason: string;
  constructor(filename: string, reason: string) {
    super(`the database file ${filename} ${reason}`);
    this.reason = reason;
  }
}

/**
 * `dialect` with its connection checked against the file on disk before every statement and
 * after each commit:
 * - the database file and its WAL must still be the files opened (same device and inode): a
 *   deleted or replaced file is reported, and nothing written to the unlinked one is
 *   acknowledged, since a restart would not read it;
 * - the database, its WAL and its shared-memory index must be writable. SQLite maps the
 *   `-shm` file into memory and writes to it even when reading: once the file cannot be written
 *   (read-only remount, immutable flag) that write kills the process with SIGBUS, which no
 *   handler can catch. Checking first turns that into an error.
 *
 * The check is a few `stat`/`access` calls; it narrows the window in which a fault reaches
 * SQLite to the time of one statement, but cannot close it. Logs the first fault and the
 * recovery once each. Closing a database whose files cannot be written leaves its handle open
 * (closing would checkpoint into the mapped index); a process that then exits with
 * `process.exit` never touches it again.
 */
export function guardSqliteFile(dialect: Dialect, file: string, logger: Logger = silentLogger): Dialect {
  const filename = resolve(file); // checked against the file opened, whatever the working directory becomes
  const opened = new Map<string, Stats>();
  let fault: string | undefined;

  /** Throw if the files are faulty; `writableOnly` leaves out whether they are still the files opened. */
  const check = (writableOnly = false) => {
    const reason = faultOf(filename, writableOnly ? new Map() : opened);
    if (writableOnly && !reason) return; // says nothing about the files' identity
    if (reason !== fault) {
      if (reason) logger.error("database unavailable", { file: filename, reason });
      else logger.info("database available again", { file: filename });
      fault = reason;
    }
    if (reason) throw new DatabaseUnavailableError(filename, reason);
  };

  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => {
      const driver = dialect.createDriver();
      const guarded = new WeakMap<DatabaseConnection, DatabaseConnection>();
      const guard = (connection: DatabaseConnection): DatabaseConnection => ({
        async executeQuery<R>(query: CompiledQuery, options?: AbortableOperationOptions) {
          // A rollback writes nothing and must never be refused: it ends the transaction. A
          // commit is checked whole once it is done: what it wrote must be in the file a
          // restart reads, else it is not acknowledged.
          const ending = /^\s*(commit|rollback)\b/i.exec(query.sql)?.[1]?.toLowerCase();
          if (ending !== "rollback") check(ending === "commit");
          const result = await connection.executeQuery<R>(query, options);
          if (ending === "commit") check();
          return result;
        },
        streamQuery<R>(query: CompiledQuery, chunkSize: number, options?: AbortableOperationOptions) {
          check();
          return connection.streamQuery<R>(query, chunkSize, options);
        },
      });
      const overrides: Partial<Driver> = {
        // Closing makes SQLite checkpoint, writing to the mapped index: with files that cannot be
        // written that is a SIGBUS. The handle is left open instead; the OS reclaims it on exit.
        async destroy() {
          const reason = faultOf(filename, opened);
          if (reason?.startsWith(notWritable)) {
            logger.error("database left open: closing it would write to its unwritable files", { file: filename, reason });
            return;
          }
          await driver.destroy();
        },
        async init() {
          await driver.init();
          // The files as SQLite opened them (the WAL exists once the database is in WAL mode).
          for (const path of [filename, `${filename}-wal`]) {
            const stats = statSync(path, { throwIfNoEntry: false });
            if (stats) opened.set(path, stats);
          }
        },
        async acquireConnection() {
          const connection = await driver.acquireConnection();
          let wrapped = guarded.get(connection);
          if (!wrapped) {
            wrapped = guard(connection);
            guarded.set(connection, wrapped);
          }
          return wrapped;
        },
      };
      // The driver's other methods, called on the driver itself (they use its private fields).
      // Each connection it lends checks the file before every statement and after each commit.
      return new Proxy(driver, {
        get: (target, key: keyof Driver) => overrides[key] ?? (target[key] as () => unknown)?.bind(target),
      });
    },
  };
}

const notWritable = "is not writable";

/** What is wrong with the files of `filename`, or undefined when they are the ones opened and writable. */
function faultOf(filename: string, opened: ReadonlyMap<string, Stats>): string | undefined {
  for (const [path, was] of opened) {
    const now = statSync(path, { throwIfNoEntry: false });
    const name = path === filename ? "" : ` (its ${path.slice(filename.length + 1).toUpperCase()} file)`;
    if (!now) return `is gone${name}: deleted while the service runs; what is written now would be lost on restart`;
    if (now.ino !== was.ino || now.dev !== was.dev) return `was replaced${name} while the service runs`;
  }
  for (const path of [filename, `${filename}-wal`, `${filename}-shm`]) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") return `${notWritable} (${path}: ${code})`;
    }
  }
  return undefined;
}
