import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { withStatementCache } from "../src/statement-cache.ts";

describe("withStatementCache", () => {
  it("prepares a statement once per SQL text and answers from the live table, also after its schema changed", () => {
    const database = new Database(":memory:");
    let prepared = 0;
    const counting = {
      close: () => database.close(),
      prepare: (sql: string) => {
        prepared++;
        return database.prepare(sql);
      },
    };
    const cached = withStatementCache(counting);
    try {
      cached.prepare("create table t (a integer)").run([]);
      const insert = "insert into t (a) values (?)";
      for (const a of [1, 2, 3]) cached.prepare(insert).run([a]);
      expect(cached.prepare("select a from t order by a").all([])).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
      cached.prepare("alter table t add column b integer default 7").run([]);
      expect(cached.prepare("select * from t order by a").all([])).toEqual([
        { a: 1, b: 7 },
        { a: 2, b: 7 },
        { a: 3, b: 7 },
      ]);
      cached.prepare(insert).run([4]);
      expect(cached.prepare("select a from t order by a").all([])).toHaveLength(4);
      // create, insert, two selects, alter: each SQL text once.
      expect(prepared).toBe(5);
    } finally {
      cached.close();
    }
  });
});
