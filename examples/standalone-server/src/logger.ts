import type { Logger } from "@bundlekit/core";

const levels = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof levels)[number];

/** One JSON line per message on stderr, at `level` and above. */
export function createConsoleLogger(level: LogLevel = "info"): Logger {
  const min = levels.indexOf(level);
  const log = (at: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (levels.indexOf(at) < min) return;
    const line = { time: new Date().toISOString(), level: at, message, ...fields };
    process.stderr.write(`${JSON.stringify(line, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
