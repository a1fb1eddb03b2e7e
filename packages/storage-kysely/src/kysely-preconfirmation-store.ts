import type { Preconfirmation, PreconfirmationStatus, PreconfirmationStore } from "@bundlekit/core";
import { type Address, getAddress, type Hash, type Hex } from "viem";
import { type KyselyStoreOptions, openStoreDatabase, type StoreDatabase } from "./open-store-database.ts";
import type { PreconfirmationDatabase, PreconfirmationsTable } from "./schema.ts";

/** Options of `createKyselyPreconfirmationStore`: the database it owns, and whether to migrate it. */
export type KyselyPreconfirmationStoreOptions<DB extends PreconfirmationDatabase = PreconfirmationDatabase> = KyselyStoreOptions<DB>;

/** A SQL-backed `PreconfirmationStore`; `close()` destroys its Kysely instance (once no other store shares it). */
export interface KyselyPreconfirmationStore extends PreconfirmationStore {
  /** Throw unless the database accepts a write now (a write that changes nothing; for health checks). */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A `PreconfirmationStore` on SQLite or PostgreSQL through Kysely: one row per operation, so
 * every engine on the database sees the promises any of them made. Settling is one conditional
 * update (`where status = 'promised'`): of two engines settling one promise, one wins.
 */
export async function createKyselyPreconfirmationStore<DB extends PreconfirmationDatabase>(
  options: KyselyPreconfirmationStoreOptions<DB>,
): Promise<KyselyPreconfirmationStore> {
  return preconfirmationStoreOn((await openStoreDatabase(options)).use());
}

/** The preconfirmation store on a database it may share with other stores; `close()` lets go of it. */
export function preconfirmationStoreOn({ db, transactions, close }: StoreDatabase<PreconfirmationDatabase>): KyselyPreconfirmationStore {
  return {
    async promise(preconfirmations) {
      if (preconfirmations.length === 0) return;
      await transactions.write((trx) =>
        trx
          .insertInto("preconfirmations")
          .values(preconfirmations.map(toRow))
          .onConflict((conflict) =>
            conflict.column("user_op_hash").doUpdateSet((eb) => ({
              entry_point: eb.ref("excluded.entry_point"),
              chain_id: eb.ref("excluded.chain_id"),
              block_number: eb.ref("excluded.block_number"),
              transaction_hash: eb.ref("excluded.transaction_hash"),
              signer: eb.ref("excluded.signer"),
              signature: eb.ref("excluded.signature"),
              status: eb.ref("excluded.status"),
              reason: eb.ref("excluded.reason"),
            })),
          )
          .execute(),
      );
    },

    async get(userOpHash) {
      const row = await db.selectFrom("preconfirmations").selectAll().where("user_op_hash", "=", userOpHash.toLowerCase()).executeTakeFirst();
      return row && fromRow(row);
    },

    async settle(userOpHash, outcome) {
      const row = await transactions.write((trx) =>
        trx
          .updateTable("preconfirmations")
          .set({ status: outcome.status, reason: outcome.status === "broken" ? outcome.reason : null })
          .where("user_op_hash", "=", userOpHash.toLowerCase())
          .where("status", "=", "promised")
          .returningAll()
          .executeTakeFirst(),
      );
      return row && fromRow(row);
    },

    checkWritable: () => transactions.probe("preconfirmations"),
    close,
  };
}

function toRow(preconfirmation: Preconfirmation) {
  return {
    user_op_hash: preconfirmation.userOpHash.toLowerCase(),
    entry_point: getAddress(preconfirmation.entryPoint),
    chain_id: preconfirmation.chainId,
    block_number: preconfirmation.blockNumber.toString(),
    transaction_hash: preconfirmation.transactionHash.toLowerCase(),
    signer: getAddress(preconfirmation.signer),
    signature: preconfirmation.signature,
    status: preconfirmation.status,
    reason: preconfirmation.reason ?? null,
  };
}

function fromRow(row: { [K in keyof PreconfirmationsTable]: unknown }): Preconfirmation {
  return {
    userOpHash: row.user_op_hash as Hash,
    entryPoint: row.entry_point as Address,
    chainId: Number(row.chain_id),
    blockNumber: BigInt(row.block_number as string | number | bigint),
    transactionHash: row.transaction_hash as Hash,
    signer: row.signer as Address,
    signature: row.signature as Hex | null,
    status: row.status as PreconfirmationStatus,
    ...(row.reason === null ? {} : { reason: row.reason as string }),
  };
}
