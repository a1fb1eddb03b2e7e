import type { Address, Hash, Hex } from "viem";
import type { EntryPointVersion } from "../entrypoint/version.ts";
import type { UserOperation } from "../userop/types.ts";

/**
 * Where a user operation is in its life:
 * - `pending`: accepted, waiting for a bundle;
 * - `bundling`: claimed by a bundle builder (a lease that expires back to `pending`);
 * - `submitted`: in a bundle transaction sent to the chain, followed by the engine that sent it
 *   while it renews its claim; once the claim lapses another engine may adopt it;
 * - `included`: its `UserOperationEvent` is on chain (it may still have reverted: see the receipt);
 * - `failed`: its bundle transaction was mined without it (the bundle reverted, or left it out);
 * - `dropped`: it left the pool without being sent (replaced, expired, cleared, or rejected when
 *   re-validated for a bundle).
 *
 * `failed` and `dropped` are final and carry a `failureReason`; they match the engine's status
 * events of the same names. Neither is on chain, so the same operation sent again is admitted
 * afresh (`readmissibleStatuses`).
 */
export type UserOperationStatus =
  | "pending"
  | "bundling"
  | "submitted"
  | "included"
  | "failed"
  | "dropped";

export const userOperationStatuses: readonly UserOperationStatus[] = [
  "pending",
  "bundling",
  "submitted",
  "included",
  "failed",
  "dropped",
];

/** Where an included operation landed. */
export interface Inclusion {
  transactionHash: Hash;
  blockHash: Hash;
  blockNumber: bigint;
}

/** What safe validation learned about an operation, kept for the checks before it is bundled. */
export interface ValidationFacts {
  /** keccak256 of the code of every contract the validation used, by lower-case address (COD-010). */
  codeHashes: Record<Address, Hex>;
  /** Contracts whose storage or transient storage the validation touched, lower case (STO-041). */
  storageContracts: Address[];
  /** The entities that were staked, which answer for others' failures (EREP-020, EREP-030). Absent: none. */
  staked?: ("account" | "factory" | "paymaster")[];
}

/** What the engine hands the store when it accepts an operation. */
export interface NewMempoolEntry {
  userOpHash: Hash;
  entryPoint: Address;
  entryPointVersion: EntryPointVersion;
  userOperation: UserOperation;
  /** Milliseconds since the epoch (from the engine's `Clock`). */
  receivedAt: number;
  /** Set when validated in safe mode; kept as given. */
  validation?: ValidationFacts | undefined;
  /** Bytes of `context` its paymaster's validation returned, when it returned one (LIM-050 counts them per bundle). */
  paymasterContextSize?: number | undefined;
}

/** An operation as the store keeps it. */
export interface MempoolEntry extends NewMempoolEntry {
  status: UserOperationStatus;
  updatedAt: number;
  /** Set from `submitted` on: the bundle transaction that carries it. */
  transactionHash?: Hash | undefined;
  /** Set once `included`. */
  inclusion?: Inclusion | undefined;
  /** Set once `failed` or `dropped`: why. */
  failureReason?: string | undefined;
}

export interface ClaimForBundleParameters {
  entryPoint: Address;
  /** At most this many operations. */
  limit: number;
  /**
   * At most this many operations of one sender, its lowest nonces (a sender's parallel nonce keys,
   * or consecutive nonces, in one bundle). Default 1.
   */
  perSender?: number | undefined;
  /** Who claims (an engine instance id); claims by others are never returned. */
  claimant: string;
  /** The claim lapses back to `pending` this long after `now` unless the op moves on. */
  leaseMs: number;
  now: number;
}

export interface AdoptSubmittedParameters {
  claimant: string;
  /** Also adopt, lapsed or not, what this claimant holds. */
  previousClaimant?: string | undefined;
  leaseMs: number;
  now: number;
  limit: number;
}

/**
 * Which of the sender's pooled operations a new one replaces (same sender and nonce), if any: a
 * policy's yes (`MempoolPolicy.admit`), applied by `MempoolStore.admit`.
 */
export interface Admission {
  replaces: MempoolEntry | undefined;
}

/**
 * Final statuses of operations that are not on chain: their hash may be admitted again, and
 * starts over as a fresh `pending` entry. `dropped` left the pool unsent; `failed` was in a
 * bundle transaction mined without it, so its nonce is still unused. An `included` hash (or one
 * still in the pool) stays known.
 */
export const readmissibleStatuses: readonly UserOperationStatus[] = ["dropped", "failed"];

/**
 * The mempool's durable state. Intent-level: each method is one step of an operation's life, and
 * each is atomic. An operation is durable once `admit` resolves; the engine returns its hash only
 * then. Implementations: `createMemoryMempoolStore` (in process memory), SQLite and Postgres
 * (`@bundlekit/storage-kysely`). Every implementation passes `mempoolStoreContract` (`@bundlekit/testing`).
 */
export interface MempoolStore {
  /**
   * Admit a validated operation in one atomic step: read the sender's operations in the pool on
   * the entry's EntryPoint (as `listBySender` lists them), ask `decide` (the policy, synchronous)
   * which one it replaces, and store the entry as `pending`, the replaced one `dropped`
   * ("replaced by <hash>"). No other `admit` of the same sender and EntryPoint runs in between,
   * in this process or another sharing the database, so replacement and per-sender limits hold
   * under concurrency: of racing operations with one sender and nonce, one wins.
   *
   * Throws, changing nothing: `DuplicateUserOperationError`, before deciding, if the hash is known
   * in a status other than `readmissibleStatuses` (a row in one of those is overwritten); what
   * `decide` throws; `MempoolRejectionError` if the operation to replace is no longer `pending`
   * (claimed for a bundle meanwhile). Resolves with the decision as applied.
   */
  admit(entry: NewMempoolEntry, decide: (senderOperations: readonly MempoolEntry[]) => Admission): Promise<Admission>;
  /** The operation with this hash, in any status. */
  get(userOpHash: Hash): Promise<MempoolEntry | undefined>;
  /**
   * The operations of `sender` on `entryPoint` still in the pool (`pending`, `bundling` or
   * `submitted`), by nonce (ties oldest first): what replacement, queued nonces and per-sender
   * limits are decided on.
   */
  listBySender(entryPoint: Address, sender: Address): Promise<MempoolEntry[]>;
  /**
   * The operations on `entryPoint` still in the pool that name `address` as their factory or
   * paymaster, oldest first: what the per-entity rules count (ERC-7562 STO-040, UREP-020, GREP-020,
   * a paymaster's deposit) without listing the whole pool.
   */
  listByEntity(entryPoint: Address, address: Address): Promise<MempoolEntry[]>;
  /** Operations in `status`, oldest first. */
  list(
    status: UserOperationStatus,
    options?: { entryPoint?: Address; limit?: number },
  ): Promise<MempoolEntry[]>;
  /** How many operations are in each status. */
  countByStatus(): Promise<Record<UserOperationStatus, number>>;
  /**
   * Atomically claim up to `limit` operations for one bundle, oldest first, at most `perSender`
   * per sender (its lowest nonces), skipping senders that already have an operation claimed or
   * submitted (so a sender's nonces land in order). Claimed operations move to `bundling`. Expired claims count as
   * pending. Safe when several engines share one database: no operation is claimed twice.
   */
  claimForBundle(parameters: ClaimForBundleParameters): Promise<MempoolEntry[]>;
  /**
   * Claimed operations are being sent in `transactionHash` (recorded before the transaction
   * leaves, so a crash leaves a hash to reconcile). They keep their claim: the engine that sent
   * them follows them while it renews it (`renewClaims`). Included operations whose block left
   * the canonical chain while their transaction is pending again come back here too (their
   * inclusion is forgotten).
   */
  markSubmitted(userOpHashes: readonly Hash[], transactionHash: Hash, now: number): Promise<void>;
  /**
   * Operations `claimant` claimed for a bundle and never sent (`bundling`) go back to `pending`,
   * lease or not: an engine restarting under its instance id releases what it held when it died,
   * instead of waiting for its own claims to lapse. A sent operation is `submitted` before its
   * transaction leaves (`markSubmitted`), so none of these can be on chain. Returns their hashes.
   */
  releaseClaims(claimant: string, now: number): Promise<Hash[]>;
  /** Extend to `until` the claims `claimant` holds on these operations (claimed or submitted); others are left alone. */
  renewClaims(userOpHashes: readonly Hash[], claimant: string, until: number): Promise<void>;
  /**
   * Claim `submitted` operations nobody follows any more, for `claimant` to reconcile with the
   * chain: those whose claim lapsed by `now`, and those `previousClaimant` holds (the same
   * engine before a restart). Oldest first, at most `limit`. Safe when several engines share one
   * database: each operation is adopted by one.
   */
  adoptSubmitted(parameters: AdoptSubmittedParameters): Promise<MempoolEntry[]>;
  /** The operation's `UserOperationEvent` was seen on chain. */
  markIncluded(userOpHash: Hash, inclusion: Inclusion, now: number): Promise<void>;
  /** Operations leave the pool as `failed`, with a reason: their bundle transaction was mined without them. */
  markFailed(userOpHashes: readonly Hash[], reason: string, now: number): Promise<void>;
  /**
   * Operations not yet sent (`pending` or `bundling`) leave the pool as `dropped`, with a reason
   * (e.g. rejected when re-validated for a bundle). Others are left as they are.
   */
  drop(userOpHashes: readonly Hash[], reason: string, now: number): Promise<void>;
  /**
   * Drop every `pending` operation received before `olderThan` (reason "expired"); resolves with
   * their hashes, so the engine can report them. Claimed and sent operations are left alone.
   */
  expire(olderThan: number, now: number): Promise<Hash[]>;
  /**
   * Drop every operation not yet sent (`pending` or `bundling`), on one EntryPoint or all
   * (reason "cleared"); resolves with their hashes. Sent operations stay tracked to their receipt.
   */
  clear(options: { entryPoint?: Address; now: number }): Promise<Hash[]>;
  /**
   * Claimed, submitted or included operations go back to `pending` (their bundle was not mined,
   * was mined without them, or its block left the canonical chain); their transaction and
   * inclusion are forgotten.
   */
  requeue(userOpHashes: readonly Hash[], now: number): Promise<void>;
  /** Release connections. Optional: stores without resources omit it. */
  close?(): Promise<void>;
}
