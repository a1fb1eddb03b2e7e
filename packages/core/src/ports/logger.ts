/** Structured logging. Messages are short; `fields` carry the details. Never pass secrets. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Discards everything; the default for an embedded engine. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
