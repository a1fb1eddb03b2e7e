import { randomUUID } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { canonicalEntryPoints } from "@bundlekit/core";
import { fixtureEntry, fixtureFactory, replacingNothing } from "@bundlekit/testing";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createPostgresStores, createSqliteStores, type KyselyStores } from "../src/index.ts";
import { postgresSchemas, sqliteFiles } from "./backends.ts";

const entryPoint = canonicalEntryPoints["0.7"];

/** Use both stores: admit an operation, count an entity; what each store then reads back. */
async function useBoth({ mempool, reputation }: Pick<KyselyStores, "mempool" | "reputation">) {
  const entry = await fixtureEntry();
  await mempool.admit(entry, replacingNothing);
  await reputation.recordSeen(entryPoint, [fixtureFactory]);
  return {
    status: (await mempool.get(entry.userOpHash))?.status,
    reputation: await reputation.list(entryPoint),
  };
}
const bothUsed = {
  status: "pending",
  reputation: [{ address: fixtureFactory, opsSeen: 1, opsIncluded: 0 }],
};

describe("both stores on one database", () => {
  describe("createSqliteStores", () => {
    const { newFile } = sqliteFiles("bundlekit-stores");

    it("opens a new file five times in a row, both stores working", async () => {
      for (let run = 0; run < 5; run++) {
        const stores = await createSqliteStores({ filename: newFile() });
        try {
          expect(await useBoth(stores)).toEqual(bothUsed);
        } finally {
          await stores.close();
        }
      }
    });

    // The process's open files, as Linux lists them: one connection opens the database file once.
    it.runIf(process.platform === "linux")(
      "opens the file once: both stores on one connection",
      async () => {
        const filename = newFile();
        const handles = () =>
          readdirSync("/proc/self/fd").filter((fd) => {
            try {
              return readlinkSync(`/proc/self/fd/${fd}`) === filename;
            } catch {
              return false; // closed meanwhile (readdir's own handle)
            }
          }).length;
        const stores = await createSqliteStores({ filename });
        try {
          await useBoth(stores);
          expect(handles()).toBe(1);
        } finally {
          await stores.close();
        }
        expect(handles()).toBe(0);
      },
    );

    it("keeps the connection while any store is open, and closes it once all are closed", async () => {
      const stores = await createSqliteStores({ filename: newFile() });
      await stores.preconfirmations.close();
      await stores.mempool.close();
      expect(await stores.reputation.list(entryPoint)).toEqual([]);
      await stores.mempool.close(); // a second close lets go of nothing more
      expect(await stores.reputation.list(entryPoint)).toEqual([]);
      await stores.reputation.close();
      await expect(stores.reputation.list(entryPoint)).rejects.toThrow();
      await expect(stores.mempool.countByStatus()).rejects.toThrow();
    });
  });

  describe("createPostgresStores", () => {
    const { admin, newSchema } = postgresSchemas("bundlekit_stores");

    it("uses one pool for both stores: one connection to the server when they are used one after the other", async () => {
      const named = (await newSchema()).url;
      named.searchParams.set("application_name", `bundlekit_${randomUUID().slice(0, 8)}`);
      const connections = async () =>
        (
          await admin.query(
            "select count(*)::int as n from pg_stat_activity where application_name = $1",
            [named.searchParams.get("application_name")],
          )
        ).rows[0].n;
      const stores = await createPostgresStores({ connectionString: named.toString() });
      try {
        expect(await useBoth(stores)).toEqual(bothUsed);
        await stores.checkWritable();
        expect(await connections()).toBe(1);
      } finally {
        await stores.close();
      }
      await expect.poll(connections).toBe(0);
    });

    it("ends a pool it is given once every store is closed, not before", async () => {
      const pool = new pg.Pool({ connectionString: (await newSchema()).url.toString() });
      const stores = await createPostgresStores({ pool });
      await stores.reputation.close();
      await stores.preconfirmations.close();
      expect(pool.ended).toBe(false);
      expect(await stores.mempool.countByStatus()).toMatchObject({ pending: 0 });
      await stores.mempool.close();
      expect(pool.ended).toBe(true);
    });
  });
});
