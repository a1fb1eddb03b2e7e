import {
  deserializeUserOperation,
  entitiesOf,
  type EntryPointVersion,
  type MempoolEntry,
  type NewMempoolEntry,
  type ValidationFacts,
  serializeUserOperation,
  type UserOperation,
} from "@bundlekit/core";
import type { Insertable, Selectable } from "kysely";
import { type Address, getAddress, type Hash } from "viem";
import type { UserOperationsTable } from "./schema.ts";

/** How keys are written, so lookups match whatever letter case the caller uses. */
export const hashKey = (hash: Hash): string => hash.toLowerCase();
export const addressKey = (address: Address): string => getAddress(address);
export const nonceKey = (nonce: bigint): string => `0x${nonce.toString(16).padStart(64, "0")}`;

/** The row of a newly accepted operation. */
export function toRow(entry: NewMempoolEntry): Insertable<UserOperationsTable> {
  return {
    hash: hashKey(entry.userOpHash),
    entry_point: addressKey(entry.entryPoint),
    entry_point_version: entry.entryPointVersion,
    sender: addressKey(entry.userOperation.sender),
    nonce: nonceKey(entry.userOperation.nonce),
    user_operation: serializeUserOperation(entry.userOperation),
    ...entityColumns(entry.userOperation),
    status: "pending",
    received_at: entry.receivedAt,
    updated_at: entry.receivedAt,
    ...(entry.validation ? { validation: JSON.stringify(entry.validation) } : {}),
    ...(entry.paymasterContextSize !== undefined ? { paymaster_context_size: entry.paymasterContextSize } : {}),
  };
}

/** The `factory` and `paymaster` columns of an operation: the entities it names besides its sender. */
export function entityColumns(op: UserOperation): { factory: string | null; paymaster: string | null } {
  const entities = entitiesOf(op);
  return {
    factory: entities.find((e) => e.role === "factory")?.address ?? null,
    paymaster: entities.find((e) => e.role === "paymaster")?.address ?? null,
  };
}

/** The entry a row holds; optional fields are present only when set. */
export function toEntry(row: Selectable<UserOperationsTable>): MempoolEntry {
  const version = row.entry_point_version as EntryPointVersion;
  const entry: MempoolEntry = {
    userOpHash: row.hash as Hash,
    entryPoint: row.entry_point as Address,
    entryPointVersion: version,
    userOperation: deserializeUserOperation(row.user_operation, version),
    receivedAt: Number(row.received_at),
    status: row.status,
    updatedAt: Number(row.updated_at),
  };
  if (row.transaction_hash !== null) entry.transactionHash = row.transaction_hash as Hash;
  if (row.block_hash !== null && row.block_number !== null && entry.transactionHash) {
    entry.inclusion = {
      transactionHash: entry.transactionHash,
      blockHash: row.block_hash as Hash,
      blockNumber: BigInt(row.block_number),
    };
  }
  if (row.failure_reason !== null) entry.failureReason = row.failure_reason;
  if (row.validation) entry.validation = JSON.parse(row.validation) as ValidationFacts;
  if (row.paymaster_context_size !== null && row.paymaster_context_size !== undefined) entry.paymasterContextSize = Number(row.paymaster_context_size);
  return entry;
}
