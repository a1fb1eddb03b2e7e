/** Whether `database` (`BUNDLEKIT_DATABASE`) names a PostgreSQL server rather than a SQLite file. */
export function isPostgresDatabase(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/**
 * `database` as it may be printed: a PostgreSQL URL without its password or query
 * (`postgres://bundler:***@db:5432/bundlekit?…`), a SQLite file as is.
 */
export function describeDatabase(database: string): string {
  if (!isPostgresDatabase(database)) return database === ":memory:" || database === "" ? ":memory: (nothing kept across restarts)" : database;
  const url = parsePostgresUrl(database);
  if (!url) return `${database.split(":")[0]}://…`;
  const user = url.username ? `${url.username}${url.password ? ":***" : ""}@` : "";
  return `${url.protocol}//${user}${url.host}${url.pathname}${url.search ? "?…" : ""}`;
}

/** The password of a PostgreSQL URL as written and decoded (either may appear in a driver's message); none for a SQLite file. */
export function postgresPassword(database: string): string[] {
  const password = isPostgresDatabase(database) ? parsePostgresUrl(database)?.password : undefined;
  if (!password) return [];
  return [...new Set([password, safeDecode(password)])];
}

/** A PostgreSQL URL parsed, or undefined when it is not a URL. */
export function parsePostgresUrl(database: string): URL | undefined {
  try {
    return new URL(database);
  } catch {
    return undefined;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
