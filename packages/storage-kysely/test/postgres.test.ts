import { erc7562Admission } from "@bundlekit/core";
import { fixtureEntry, mempoolStoreContract } from "@bundlekit/core/testing";
import { describe, expect, it } from "vitest";
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
