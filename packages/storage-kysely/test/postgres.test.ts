import { randomUUID } from "node:crypto";
import { erc7562Admission } from "@bundlekit/core";
import { fixtureEntry, mempoolStoreContract } from "@bundlekit/testing";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { createPostgresMempoolStore } from "../src/index.ts";
import { onPostgresSchema } from "./backends.ts";

mempoolStoreContract("PostgreSQL", () => onPostgresSchema((pool) => createPostgresMempoolStore({ pool })));

describe("PostgreSQL admission", () => {
  it("admits one of many racing operations with one sender and nonce where transactions default to REPEATABLE READ", async () => {
    const { store, cleanup } = await onPostgresSchema((pool) => {
      pool.on("connect", (client) => void client.query("set default_transaction_isolation = 'repeatable read'"));
      return createPostgresMempoolStore({ pool });
    });
    try {
      const admit = erc7562Admission();
      const entries = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((variant) => fixtureEntry({ variant })));
      const settled = await Promise.allSettled(
        entries.map((entry) => store.admit(entry, (senderOperations) => admit({ entry, senderOperations, senderStaked: false }))),
      );
      expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
      expect(await store.countByStatus()).toMatchObject({ pending: 1 });
    } finally {
      await store.close();
      await cleanup?.();
    }
  });
});

describe("PostgreSQL migrations", () => {
  it("create the tables while other schemas in the database are created and dropped", async () => {
    const churn = new pg.Pool({ connectionString: inject("postgresUrl"), max: 2 });
    let churning = true;
    const others = (async () => {
      while (churning) {
        const schema = `bundlekit_churn_${randomUUID().replaceAll("-", "")}`;
        await churn.query(`create schema ${schema}; create table ${schema}.t (a int)`);
        await churn.query(`drop schema ${schema} cascade`);
      }
    })();
    try {
      for (let round = 0; round < 8; round++) {
        const { store, cleanup } = await onPostgresSchema((pool) => createPostgresMempoolStore({ pool }));
        expect(await store.countByStatus()).toMatchObject({ pending: 0 });
        await store.close();
        await cleanup?.();
      }
    } finally {
      churning = false;
      await others;
      await churn.end();
    }
  });
});
