import {
  type ReputationEntry,
  type ReputationStore,
  reputationDecayIntervalMs,
} from "@bundlekit/core";
import { sql } from "kysely";
import { type Address, getAddress } from "viem";
import { type KyselyStoreOptions, openStoreDatabase, type StoreDatabase } from "./open-store-database.ts";
import type { ReputationDatabase } from "./schema.ts";

/** Options of `createKyselyReputationStore`: the database it owns, and whether to migrate it. */
export type KyselyReputationStoreOptions<DB extends ReputationDatabase = ReputationDatabase> = KyselyStoreOptions<DB>;

/** A SQL-backed `ReputationStore`; `close()` destroys its Kysely instance (once no other store shares it). */
export interface KyselyReputationStore extends ReputationStore {
  /** Throw unless the database accepts a write now (a write that changes nothing; for health checks). */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}

/** Hours of decay beyond which every counter of practical size is zero ((23/24)^1000 < 1e-18). */
const maxDecaySteps = 1000;
const decayRow = 1;

const addressKey = (address: Address): string => address.toLowerCase();
const uniqueKeys = (addresses: readonly Address[]) => [...new Set(addresses.map(addressKey))];

/**
 * A `ReputationStore` on SQLite or PostgreSQL through Kysely. Counters change in single
 * statements (`x = x + 1`), so concurrent engines sharing the database lose no count; the hourly
 * decay runs once per hour however many engines call it (a compare-and-set on its clock row).
 */
export async function createKyselyReputationStore<DB extends ReputationDatabase>(
  options: KyselyReputationStoreOptions<DB>,
): Promise<KyselyReputationStore> {
  return reputationStoreOn((await openStoreDatabase(options)).use());
}

/** The reputation store on a database it may share with other stores; `close()` lets go of it. */
export function reputationStoreOn({ db, transactions, close }: StoreDatabase<ReputationDatabase>): KyselyReputationStore {

  const toEntry = (row: {
    address: string;
    ops_seen: unknown;
    ops_included: unknown;
  }): ReputationEntry => ({
    address: getAddress(row.address),
    opsSeen: Number(row.ops_seen),
    opsIncluded: Number(row.ops_included),
  });

  /** Apply `change` to the rows of `addresses` on `entryPoint`. */
  async function update(
    entryPoint: Address,
    addresses: readonly Address[],
    change: "seen" | "retract" | "included",
  ) {
    const keys = uniqueKeys(addresses);
    if (keys.length === 0) return;
    const set = {
      seen: { ops_seen: sql<number>`ops_seen + 1` },
      retract: { ops_seen: sql<number>`case when ops_seen > 0 then ops_seen - 1 else 0 end` },
      included: { ops_included: sql<number>`ops_included + 1` },
    }[change];
    await transactions.write((trx) =>
      trx
        .updateTable("reputation")
        .set(set)
        .where("entry_point", "=", getAddress(entryPoint))
        .where("address", "in", keys)
        .execute(),
    );
  }

  return {
    async get(entryPoint, addresses) {
      const keys = uniqueKeys(addresses);
      if (keys.length === 0) return [];
      const rows = await db
        .selectFrom("reputation")
        .selectAll()
        .where("entry_point", "=", getAddress(entryPoint))
        .where("address", "in", keys)
        .execute();
      return keys.flatMap((key) => {
        const row = rows.find((r) => r.address === key);
        return row ? [toEntry(row)] : [];
      });
    },

    async list(entryPoint) {
      const rows = await db
        .selectFrom("reputation")
        .selectAll()
        .where("entry_point", "=", getAddress(entryPoint))
        .orderBy("address")
        .execute();
      return rows.map(toEntry);
    },

    async recordSeen(entryPoint, addresses) {
      const keys = uniqueKeys(addresses);
      if (keys.length === 0) return;
      const ep = getAddress(entryPoint);
      await transactions.write((trx) =>
        trx
          .insertInto("reputation")
          .values(
            keys.map((address) => ({ entry_point: ep, address, ops_seen: 1, ops_included: 0 })),
          )
          .onConflict((oc) =>
            oc
              .columns(["entry_point", "address"])
              .doUpdateSet({ ops_seen: sql<number>`reputation.ops_seen + 1` }),
          )
          .execute(),
      );
    },

    retractSeen: (entryPoint, addresses) => update(entryPoint, addresses, "retract"),
    recordIncluded: (entryPoint, addresses) => update(entryPoint, addresses, "included"),

    async set(entryPoint, entries) {
      if (entries.length === 0) return;
      const ep = getAddress(entryPoint);
      const rows = new Map(
        entries.map((e) => [
          addressKey(e.address),
          {
            entry_point: ep,
            address: addressKey(e.address),
            ops_seen: Math.max(0, e.opsSeen),
            ops_included: Math.max(0, e.opsIncluded),
          },
        ]),
      );
      await transactions.write((trx) =>
        trx
          .insertInto("reputation")
          .values([...rows.values()])
          .onConflict((oc) =>
            oc.columns(["entry_point", "address"]).doUpdateSet((eb) => ({
              ops_seen: eb.ref("excluded.ops_seen"),
              ops_included: eb.ref("excluded.ops_included"),
            })),
          )
          .execute(),
      );
    },

    async decay(now) {
      await transactions.write(async (trx) => {
        const { numInsertedOrUpdatedRows } = await trx
          .insertInto("reputation_decay")
          .values({ id: decayRow, decayed_at: now })
          .onConflict((oc) => oc.column("id").doNothing())
          .executeTakeFirstOrThrow();
        if (numInsertedOrUpdatedRows !== 0n) return; // the first call starts the clock
        const { decayed_at } = await trx
          .selectFrom("reputation_decay")
          .select("decayed_at")
          .where("id", "=", decayRow)
          .executeTakeFirstOrThrow();
        const last = Number(decayed_at);
        const steps = Math.floor((now - last) / reputationDecayIntervalMs);
        if (steps <= 0) return;
        // Compare-and-set: of engines that read the same clock, only one moves it and decays.
        const { numUpdatedRows } = await trx
          .updateTable("reputation_decay")
          .set({ decayed_at: last + steps * reputationDecayIntervalMs })
          .where("id", "=", decayRow)
          .where("decayed_at", "=", last)
          .executeTakeFirstOrThrow();
        if (numUpdatedRows === 0n) return;
        if (steps >= maxDecaySteps) {
          await trx.deleteFrom("reputation").execute();
          return;
        }
        for (let i = 0; i < steps; i++) {
          await trx
            .updateTable("reputation")
            .set({
              ops_seen: sql<number>`ops_seen * 23 / 24`,
              ops_included: sql<number>`ops_included * 23 / 24`,
            })
            .execute();
        }
        await trx
          .deleteFrom("reputation")
          .where("ops_seen", "=", 0)
          .where("ops_included", "=", 0)
          .execute();
      });
    },

    async clear(entryPoint) {
      await transactions.write((trx) => {
        const query = trx.deleteFrom("reputation");
        return (
          entryPoint ? query.where("entry_point", "=", getAddress(entryPoint)) : query
        ).execute();
      });
    },

    checkWritable: () => transactions.probe("reputation"),
    close,
  };
}
