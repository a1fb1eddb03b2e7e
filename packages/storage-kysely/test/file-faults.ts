import { spawnSync } from "node:child_process";
import { chmodSync, existsSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "@bundlekit/core";

/** Whether the tests run as root, who ignores file modes. */
export const isRoot = process.getuid?.() === 0;

/** A SQLite database's files: the database, its WAL and its shared-memory index. */
export const sqliteFiles = (filename: string) => [filename, `${filename}-wal`, `${filename}-shm`];

/**
 * Make a SQLite database's files and their directory refuse writes (or accept them again), as
 * the operating system does it: a user gets modes (0444/0555); root ignores modes, so root sets
 * the immutable flag, which the kernel enforces even for root.
 */
export function setWritable(filename: string, writable: boolean): void {
  const present = sqliteFiles(filename).filter(existsSync);
  if (isRoot) {
    spawnSync("chattr", [writable ? "-i" : "+i", ...present, dirname(filename)]);
  } else {
    for (const file of present) chmodSync(file, writable ? 0o644 : 0o444);
    chmodSync(dirname(filename), writable ? 0o755 : 0o555);
  }
}

/** A logger that keeps its lines, to assert what was logged. */
export function recordingLogger(): Logger & {
  lines: { level: string; message: string; fields: unknown }[];
} {
  const lines: { level: string; message: string; fields: unknown }[] = [];
  const at = (level: string) => (message: string, fields?: unknown) =>
    void lines.push({ level, message, fields });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
