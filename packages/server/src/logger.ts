import { createRedactor, type Logger as EngineLogger, type Redactor } from "@bundlekit/core";
import { Logger, References } from "effect";

const levels = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof levels)[number];

/** Effect's log levels as the service names them in its lines. */
const names: Partial<Record<string, LogLevel>> = { Debug: "debug", Info: "info", Warn: "warn", Warning: "warn", Error: "error", Fatal: "error" };

/**
 * One JSON line on stderr: time, level, message, then the fields, all through `redactor` (URLs
 * cut to scheme and host, known secrets hidden). Bigints as decimal strings.
 */
function writeLine(
  redactor: Redactor,
  level: LogLevel,
  message: string,
  fields: Record<string, unknown> = {},
) {
  const line = {
    time: new Date().toISOString(),
    level,
    message: redactor.text(message),
    ...(redactor.value(fields) as object),
  };
  process.stderr.write(
    `${JSON.stringify(line, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`,
  );
}

/**
 * The service's log lines as an Effect `Logger`: each `Effect.log*` becomes one JSON line on
 * stderr with its annotations as the fields. The engine's own lines reach it through
 * `effectLogger` (`@bundlekit/effect`). Every line passes through `redactor` (the service's,
 * `serviceRedactor`, hides its configured secrets; the default cuts URLs only).
 */
export function jsonLinesLogger(
  redactor: Redactor = createRedactor(),
): Logger.Logger<unknown, void> {
  return Logger.make<unknown, void>(({ message, logLevel, fiber }) => {
    const text = (Array.isArray(message) ? message : [message]).map(String).join(" ");
    writeLine(redactor, names[logLevel] ?? "info", text, {
      ...fiber.getRef(References.CurrentLogAnnotations),
    });
  });
}

/**
 * The same lines without Effect, at `level` and above, through `redactor`: for embedding
 * `startBundlerService` in a Promise program (which also redacts with its configured secrets).
 */
export function createConsoleLogger(
  level: LogLevel = "info",
  redactor: Redactor = createRedactor(),
): EngineLogger {
  const min = levels.indexOf(level);
  const log = (at: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (levels.indexOf(at) >= min) writeLine(redactor, at, message, fields);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
