import { type Logger, silentLogger } from "../ports/logger.ts";
import { createRedactor, type Redactor } from "./redactor.ts";

/**
 * `logger` with every line passed through `redactor` first: the message and the fields (nested
 * values, errors and their causes included). Wrapping twice is harmless: redaction is idempotent.
 * The silent logger stays as it is: there is nothing to redact in lines nobody writes, and the
 * engine logs every operation it accepts.
 */
export function redactingLogger(logger: Logger, redactor: Redactor = createRedactor()): Logger {
  if (logger === silentLogger) return logger;
  const wrap = (write: Logger["info"]) => (message: string, fields?: Record<string, unknown>) =>
    write.call(
      logger,
      redactor.text(message),
      fields === undefined ? undefined : (redactor.value(fields) as Record<string, unknown>),
    );
  return {
    debug: wrap(logger.debug),
    info: wrap(logger.info),
    warn: wrap(logger.warn),
    error: wrap(logger.error),
  };
}
