import type { SqliteDatabase, SqliteStatement } from "kysely";

/** Most distinct statements kept; the stores issue a few dozen shapes of SQL. */
const capacity = 256;

/**
 * `database` with each statement prepared once per SQL text and reused: Kysely's SQLite driver
 * prepares every query it runs, which costs more than running most of the stores' queries.
 * Statements are run to completion one at a time (`all`, `run`; the stores never stream), so a
 * reused statement is never busy. SQLite re-prepares a statement whose schema changed by itself.
 */
export function withStatementCache(database: SqliteDatabase): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= capacity) statements.clear();
        statement = database.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
