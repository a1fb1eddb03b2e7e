import {
  DuplicateUserOperationError,
  MempoolRejectionError,
  type MempoolEntry,
  type MempoolStore,
  type NewMempoolEntry,
  readmissibleStatuses,
  type UserOperationStatus,
  userOperationStatuses,
} from "@bundlekit/core";
import type {
  Expression,
  ExpressionBuilder,
  Insertable,
  Kysely,
  SqlBool,
  Updateable,
} from "kysely";
import type { Hash } from "viem";
import { type KyselyStoreOptions, openStoreDatabase, type StoreDatabase } from "./open-store-database.ts";
import { addressKey, hashKey, toEntry, toRow } from "./rows.ts";
import type { MempoolDatabase, UserOperationsTable } from "./schema.ts";

/** Options of `createKyselyMempoolStore`: the database it owns, and whether to migrate it. */
export type KyselyMempoolStoreOptions<DB extends MempoolDatabase = MempoolDatabase> = KyselyStoreOptions<DB>;

/** A SQL-backed `MempoolStore`; `close()` destroys its Kysely instance (once no other store shares it). */
export interface KyselyMempoolStore extends MempoolStore {
  /** Throw unless the database accepts a write now (a write that changes nothing; for health checks). */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}

type Where = (eb: ExpressionBuilder<MempoolDatabase, "user_operations">) => Expression<SqlBool>;

/** Rows in these statuses stay in the pool: they can still fail, be requeued or resubmitted. */
const inPool: UserOperationStatus[] = ["pending", "bundling", "submitted"];
const sentOrClaimed: UserOperationStatus[] = ["bundling", "submitted"];
/** What may go back to `submitted` or `pending`: also `included`, when its block leaves the canonical chain. */
const returnable: UserOperationStatus[] = ["bundling", "submitted", "included"];
const clearInclusion = { block_hash: null, block_number: null } satisfies Updateable<UserOperationsTable>;
const notSent: UserOperationStatus[] = ["pending", "bundling"];
/** A new row's columns beyond `toRow`: what an overwritten final row must lose. */
const freshRow = {
  claimed_by: null,
  claimed_until: null,
  transaction_hash: null,
  block_hash: null,
  block_number: null,
  failure_reason: null,
  validation: null,
  paymaster_context_size: null,
} satisfies Partial<Insertable<UserOperationsTable>>;
const clearClaim = {
  claimed_by: null,
  claimed_until: null,
} satisfies Updateable<UserOperationsTable>;

/**
 * A `MempoolStore` on any Kysely backend it knows (SQLite, PostgreSQL): one set of queries,
 * with the dialect's write transactions (see `write-transactions.ts`) as the only difference.
 * Several stores — in one process or many — may share a database; claims never overlap.
 */
export async function createKyselyMempoolStore<DB extends MempoolDatabase>(
  options: KyselyMempoolStoreOptions<DB>,
): Promise<KyselyMempoolStore> {
  return mempoolStoreOn((await openStoreDatabase(options)).use());
}

/** The mempool store on a database it may share with other stores; `close()` lets go of it. */
export function mempoolStoreOn({ db, transactions, close }: StoreDatabase<MempoolDatabase>): KyselyMempoolStore {

  /**
   * Insert `entry` as pending, over a row of the same hash in a `readmissibleStatuses` status (its
   * every column overwritten); throw `DuplicateUserOperationError` if the hash is known otherwise.
   */
  async function insert(trx: Kysely<MempoolDatabase>, entry: NewMempoolEntry): Promise<void> {
    const row = { ...freshRow, ...toRow(entry) };
    const { numInsertedOrUpdatedRows } = await trx
      .insertInto("user_operations")
      .values(row)
      .onConflict((oc) => oc.column("hash").doUpdateSet(row).where("user_operations.status", "in", readmissibleStatuses))
      .executeTakeFirstOrThrow();
    if (numInsertedOrUpdatedRows === 0n) throw new DuplicateUserOperationError(entry.userOpHash);
  }

  /** The sender's operations in the pool, by nonce (ties oldest first). */
  async function senderOperations(on: Kysely<MempoolDatabase>, entryPoint: string, sender: string): Promise<MempoolEntry[]> {
    const rows = await on
      .selectFrom("user_operations")
      .selectAll()
      .where("entry_point", "=", entryPoint)
      .where("sender", "=", sender)
      .where("status", "in", inPool)
      .orderBy("nonce")
      .orderBy("received_at")
      .orderBy("hash")
      .execute();
    return rows.map(toEntry);
  }

  /** Set `changes` on each of `hashes` whose status is in `from`. */
  async function transition(
    hashes: readonly Hash[],
    from: readonly UserOperationStatus[],
    changes: Updateable<UserOperationsTable>,
    { keepClaim = false } = {},
  ): Promise<void> {
    if (hashes.length === 0) return;
    await transactions.write((trx) =>
      trx
        .updateTable("user_operations")
        .set(keepClaim ? changes : { ...changes, ...clearClaim })
        .where("hash", "in", hashes.map(hashKey))
        .where("status", "in", from)
        .execute(),
    );
  }

  return {
    async admit(entry, decide) {
      const [entryPoint, sender] = [addressKey(entry.entryPoint), addressKey(entry.userOperation.sender)];
      // One sender's admissions queue behind each other (SQLite: behind every write), so the
      // decision is taken on what is in the pool when the entry goes in.
      return transactions.exclusive(`admit:${entryPoint}:${sender}`, async (trx) => {
        const known = await trx
          .selectFrom("user_operations")
          .select("status")
          .where("hash", "=", hashKey(entry.userOpHash))
          .executeTakeFirst();
        if (known && !readmissibleStatuses.includes(known.status)) throw new DuplicateUserOperationError(entry.userOpHash);
        const admission = decide(await senderOperations(trx, entryPoint, sender));
        if (admission.replaces) {
          const { numUpdatedRows } = await trx
            .updateTable("user_operations")
            .set({ status: "dropped", failure_reason: `replaced by ${hashKey(entry.userOpHash)}`, updated_at: entry.receivedAt })
            .where("hash", "=", hashKey(admission.replaces.userOpHash))
            .where("status", "=", "pending") // re-checked under its row lock: a claim may have taken it (PostgreSQL)
            .executeTakeFirstOrThrow();
          if (numUpdatedRows === 0n) {
            throw new MempoolRejectionError("the operation it would replace is already being bundled", {
              replacing: admission.replaces.userOpHash,
            });
          }
        }
        await insert(trx, entry);
        return admission;
      });
    },

    async get(userOpHash) {
      const row = await db
        .selectFrom("user_operations")
        .selectAll()
        .where("hash", "=", hashKey(userOpHash))
        .executeTakeFirst();
      return row && toEntry(row);
    },

    async listBySender(entryPoint, sender) {
      return senderOperations(db, addressKey(entryPoint), addressKey(sender));
    },

    async listByEntity(entryPoint, address) {
      const entity = addressKey(address);
      const rows = await db
        .selectFrom("user_operations")
        .selectAll()
        .where("entry_point", "=", addressKey(entryPoint))
        .where((eb) => eb.or([eb("factory", "=", entity), eb("paymaster", "=", entity)]))
        .where("status", "in", ["pending", "bundling", "submitted"])
        .orderBy("received_at")
        .orderBy("hash")
        .execute();
      return rows.map(toEntry);
    },

    async list(status, { entryPoint, limit } = {}) {
      let query = db.selectFrom("user_operations").selectAll().where("status", "=", status);
      if (entryPoint) query = query.where("entry_point", "=", addressKey(entryPoint));
      if (limit !== undefined) query = query.limit(limit);
      const rows = await query.orderBy("received_at").orderBy("hash").execute();
      return rows.map(toEntry);
    },

    async countByStatus() {
      const rows = await db
        .selectFrom("user_operations")
        .select((eb) => ["status", eb.fn.countAll().as("count")])
        .groupBy("status")
        .execute();
      const counts = Object.fromEntries(
        userOperationStatuses.map((status) => [status, 0]),
      ) as Record<UserOperationStatus, number>;
      for (const row of rows) counts[row.status] = Number(row.count);
      return counts;
    },

    async claimForBundle({ entryPoint, limit, perSender = 1, claimant, leaseMs, now }) {
      if (limit <= 0) return [];
      const onEntryPoint = addressKey(entryPoint);
      const underClaim: Where = (eb) =>
        eb.and([eb("status", "=", "bundling"), eb("claimed_until", ">", now)]);
      const claimable: Where = (eb) =>
        eb.or([
          eb("status", "=", "pending"),
          eb.and([eb("status", "=", "bundling"), eb("claimed_until", "<=", now)]),
        ]);
      const rows = await transactions.exclusive(onEntryPoint, async (trx) => {
        const busySenders = trx
          .selectFrom("user_operations")
          .select("sender")
          .where("entry_point", "=", onEntryPoint)
          .where((eb) => eb.or([eb("status", "=", "submitted"), underClaim(eb)]));
        // Per free sender, its lowest nonces: a sender's nonces must land in order.
        const nextOfSender = trx
          .selectFrom("user_operations")
          .select((eb) => [
            "hash",
            "received_at",
            eb.fn
              .agg<number>("row_number")
              .over((ob) =>
                ob.partitionBy("sender").orderBy("nonce").orderBy("received_at").orderBy("hash"),
              )
              .as("sender_rank"),
          ])
          .where("entry_point", "=", onEntryPoint)
          .where(claimable)
          .where("sender", "not in", busySenders);
        const picked = trx
          .selectFrom(nextOfSender.as("next"))
          .select("next.hash")
          .where("next.sender_rank", "<=", perSender)
          .orderBy("next.received_at")
          .orderBy("next.hash")
          .limit(limit);
        return trx
          .updateTable("user_operations")
          .set({
            status: "bundling",
            claimed_by: claimant,
            claimed_until: now + leaseMs,
            updated_at: now,
          })
          .where("hash", "in", picked)
          .where(claimable) // re-checked under row locks (PostgreSQL)
          .returningAll()
          .execute();
      });
      return rows.map(toEntry).sort(byAge);
    },

    async markSubmitted(userOpHashes, transactionHash, now) {
      await transition(
        userOpHashes,
        returnable,
        { status: "submitted", transaction_hash: transactionHash, updated_at: now, ...clearInclusion },
        { keepClaim: true },
      );
    },

    async releaseClaims(claimant, now) {
      const rows = await transactions.write((trx) =>
        trx
          .updateTable("user_operations")
          .set({ status: "pending", claimed_by: null, claimed_until: null, updated_at: now })
          .where("status", "=", "bundling")
          .where("claimed_by", "=", claimant)
          .returning(["hash", "received_at"])
          .execute(),
      );
      return hashesByAge(rows);
    },

    async renewClaims(userOpHashes, claimant, until) {
      if (userOpHashes.length === 0) return;
      await transactions.write((trx) =>
        trx
          .updateTable("user_operations")
          .set({ claimed_until: until })
          .where("hash", "in", userOpHashes.map(hashKey))
          .where("status", "in", sentOrClaimed)
          .where("claimed_by", "=", claimant)
          .execute(),
      );
    },

    async adoptSubmitted({ claimant, previousClaimant, leaseMs, now, limit }) {
      if (limit <= 0) return [];
      const adoptable: Where = (eb) =>
        eb.and([
          eb("status", "=", "submitted"),
          eb.or([
            eb("claimed_until", "is", null),
            eb("claimed_until", "<=", now),
            ...(previousClaimant === undefined ? [] : [eb("claimed_by", "=", previousClaimant)]),
          ]),
        ]);
      // Serialised like claims, so that concurrent adopters share out the operations, not race for the oldest.
      const rows = await transactions.exclusive("adopt-submitted", (trx) => {
        const picked = trx
          .selectFrom("user_operations")
          .select("hash")
          .where(adoptable)
          .orderBy("received_at")
          .orderBy("hash")
          .limit(limit);
        return trx
          .updateTable("user_operations")
          .set({ claimed_by: claimant, claimed_until: now + leaseMs })
          .where("hash", "in", picked)
          .where(adoptable) // re-checked under row locks (PostgreSQL)
          .returningAll()
          .execute();
      });
      return rows.map(toEntry).sort(byAge);
    },

    async markIncluded(userOpHash, inclusion, now) {
      await transition([userOpHash], userOperationStatuses, {
        status: "included",
        transaction_hash: inclusion.transactionHash,
        block_hash: inclusion.blockHash,
        block_number: inclusion.blockNumber.toString(),
        failure_reason: null,
        updated_at: now,
      });
    },

    async markFailed(userOpHashes, reason, now) {
      await transition(userOpHashes, inPool, {
        status: "failed",
        failure_reason: reason,
        updated_at: now,
      });
    },

    async drop(userOpHashes, reason, now) {
      await transition(userOpHashes, notSent, {
        status: "dropped",
        failure_reason: reason,
        updated_at: now,
      });
    },

    async expire(olderThan, now) {
      const rows = await transactions.write((trx) =>
        trx
          .updateTable("user_operations")
          .set({ status: "dropped", failure_reason: "expired", updated_at: now, ...clearClaim })
          .where("status", "=", "pending")
          .where("received_at", "<", olderThan)
          .returning(["hash", "received_at"])
          .execute(),
      );
      return hashesByAge(rows);
    },

    async clear({ entryPoint, now }) {
      const rows = await transactions.write((trx) => {
        let query = trx
          .updateTable("user_operations")
          .set({ status: "dropped", failure_reason: "cleared", updated_at: now, ...clearClaim })
          .where("status", "in", notSent);
        if (entryPoint) query = query.where("entry_point", "=", addressKey(entryPoint));
        return query.returning(["hash", "received_at"]).execute();
      });
      return hashesByAge(rows);
    },

    async requeue(userOpHashes, now) {
      await transition(userOpHashes, returnable, {
        status: "pending",
        transaction_hash: null,
        updated_at: now,
        ...clearInclusion,
      });
    },

    checkWritable: () => transactions.probe("user_operations"),
    close,
  };
}

/** The hashes of updated rows, oldest first. */
function hashesByAge(rows: { hash: string; received_at: number | bigint | string }[]): Hash[] {
  return rows
    .map((row) => ({ userOpHash: row.hash as Hash, receivedAt: Number(row.received_at) }))
    .sort(byAge)
    .map((row) => row.userOpHash);
}

/** Oldest first; ties by hash (the order of `list` and claims). */
function byAge(
  a: Pick<MempoolEntry, "receivedAt" | "userOpHash">,
  b: Pick<MempoolEntry, "receivedAt" | "userOpHash">,
): number {
  return (
    a.receivedAt - b.receivedAt ||
    (a.userOpHash < b.userOpHash ? -1 : a.userOpHash > b.userOpHash ? 1 : 0)
  );
}
