import type { Logger as EngineLogger } from "@bundlekit/core";
import { Logger, References } from "effect";

const levels = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof levels)[number];

/** Effect's log levels as the service names them in its lines. */
const names: Partial<Record<string, LogLevel>> = { Debug: "debug", Info: "info", Warn: "warn", Warning: "warn", Error: "error", Fatal: "error" };

/** One JSON line on stderr: time, level, message, then the fields. Bigints as decimal strings. */
function writeLine(level: LogLevel, message: string, fields: Record<string, unknown> = {}) {
  const line = { time: new Date().toISOString(), level, message, ...fields };
  process.stderr.write(`${JSON.stringify(line, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`);
}

/**
 * The service's log lines as an Effect `Logger`: each `Effect.log*` becomes one JSON line on
 * stderr with its annotations as the fields. The engine's own lines reach it through
 * `effectLogger` (`@bundlekit/effect`); the engine never puts a secret in its fields.
 */
export const jsonLinesLogger = Logger.make<unknown, void>(({ message, logLevel, fiber }) => {
  const text = (Array.isArray(message) ? message : [message]).map(String).join(" ");
  writeLine(names[logLevel] ?? "info", text, { ...fiber.getRef(References.CurrentLogAnnotations) });
});

/** The same lines without Effect, at `level` and above: for embedding `startBundlerService` in a Promise program. */
export function createConsoleLogger(level: LogLevel = "info"): EngineLogger {
  const min = levels.indexOf(level);
  const log = (at: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (levels.indexOf(at) >= min) writeLine(at, message, fields);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
