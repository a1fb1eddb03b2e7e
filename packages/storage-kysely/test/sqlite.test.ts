
import { fixtureEntry, mempoolStoreContract, replacingNothing } from "@bundlekit/testing";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";
import {
  createKyselyMempoolStore,
  createSqliteMempoolStore,
  type MempoolDatabase,
  migrateToLatest,
} from "../src/index.ts";
import { onSqliteFile } from "./backends.ts";

mempoolStoreContract("SQLite file", () => onSqliteFile((filename) => createSqliteMempoolStore({ filename })));

mempoolStoreContract("SQLite :memory:", async () => ({
  store: await createSqliteMempoolStore({ filename: ":memory:" }),
}));

describe("createKyselyMempoolStore on SQLite", () => {
  it("takes a Kysely instance, and migrating again changes nothing", async () => {
    const db = new Kysely<MempoolDatabase>({
      dialect: new SqliteDialect({ database: new Database(":memory:") }),
    });
    const store = await createKyselyMempoolStore({ db });
    try {
      const entry = await fixtureEntry();
      await store.admit(entry, replacingNothing);
      await migrateToLatest(db);
      expect((await store.get(entry.userOpHash))?.status).toBe("pending");
    } finally {
      await store.close();
    }
  });

  it("keeps the fixed-width nonce text that makes nonces sort numerically", async () => {
    const db = new Kysely<MempoolDatabase>({
      dialect: new SqliteDialect({ database: new Database(":memory:") }),
    });
    const store = await createKyselyMempoolStore({ db });
    try {
      await store.admit(await fixtureEntry({ nonce: (1n << 64n) | 15n }), replacingNothing);
      const { nonce } = await db
        .selectFrom("user_operations")
        .select("nonce")
        .executeTakeFirstOrThrow();
      expect(nonce).toBe(`0x${"0".repeat(47)}1${"0".repeat(15)}f`);
    } finally {
      await store.close();
    }
  });
});
