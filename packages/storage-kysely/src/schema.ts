import type { PreconfirmationStatus, UserOperationStatus } from "@bundlekit/core";
import type { ColumnType } from "kysely";

/**
 * A 64-bit integer column. Written as a number or decimal string; read back as a number
 * (better-sqlite3), a bigint (better-sqlite3 with `safeIntegers`) or a string (pg's `int8`).
 */
export type Int64 = ColumnType<number | bigint | string, number | string, number | string>;
export type NullableInt64 = ColumnType<
  number | bigint | string | null,
  number | string | null,
  number | string | null
>;

/**
 * One row per user operation. `hash` is lower-case hex, addresses are checksummed. `nonce` is
 * the 256-bit nonce as `0x` plus 64 lower-case hex digits: fixed width, so text comparison and
 * ordering match numeric ones on every backend (and any collation: the characters are 0-9a-f).
 * `user_operation` is the JSON of core's `serializeUserOperation`; times are milliseconds since
 * the epoch.
 */
export type UserOperationsTable = {
  hash: string;
  entry_point: string;
  entry_point_version: string;
  sender: string;
  nonce: string;
  user_operation: string;
  status: UserOperationStatus;
  received_at: Int64;
  updated_at: Int64;
  /** The claimant while `bundling`. */
  claimed_by: string | null;
  /** When the claim lapses, while `bundling`. */
  claimed_until: NullableInt64;
  transaction_hash: string | null;
  block_hash: string | null;
  block_number: NullableInt64;
  failure_reason: string | null;
  /** JSON of the entry's `ValidationFacts`, when validated in safe mode. */
  validation: ColumnType<string | null, string | null | undefined, string | null>;
  /** The factory the operation names, checksummed; null when none. */
  factory: ColumnType<string | null, string | null | undefined, string | null>;
  /** The paymaster the operation names, checksummed; null when none. */
  paymaster: ColumnType<string | null, string | null | undefined, string | null>;
  /** Bytes of the paymaster's validation context, when it returned one (LIM-050). */
  paymaster_context_size: ColumnType<number | null, number | null | undefined, number | null>;
};

/** The tables the mempool store owns, as Kysely sees them (a type alias, so `withTables` takes it). */
export type MempoolDatabase = {
  user_operations: UserOperationsTable;
};

/** One row per entity address (lower-case hex) per EntryPoint (checksummed). */
export type ReputationTable = {
  entry_point: string;
  address: string;
  ops_seen: Int64;
  ops_included: Int64;
};

/** When the hourly decay last ran (milliseconds since the epoch); a single row with `id` 1. */
export type ReputationDecayTable = {
  id: number;
  decayed_at: Int64;
};

/**
 * One row per operation's latest preconfirmation. `user_op_hash` and `transaction_hash` are
 * lower-case hex, addresses checksummed; `block_number` the promised block.
 */
export type PreconfirmationsTable = {
  user_op_hash: string;
  entry_point: string;
  chain_id: Int64;
  block_number: Int64;
  transaction_hash: string;
  signer: string;
  /** 65 bytes as hex; null when unsigned. */
  signature: string | null;
  status: PreconfirmationStatus;
  /** Why it was broken. */
  reason: string | null;
};

/** The tables the preconfirmation store owns. */
export type PreconfirmationDatabase = {
  preconfirmations: PreconfirmationsTable;
};

/** The tables the reputation store owns. */
export type ReputationDatabase = {
  reputation: ReputationTable;
  reputation_decay: ReputationDecayTable;
};
