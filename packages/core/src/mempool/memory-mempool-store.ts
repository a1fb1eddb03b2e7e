import type { Address, Hash } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { DuplicateUserOperationError, MempoolRejectionError } from "../errors/errors.ts";
import { entitiesOf } from "../userop/entities.ts";
import {
  type MempoolEntry,
  type MempoolStore,
  type NewMempoolEntry,
  readmissibleStatuses,
  type UserOperationStatus,
  userOperationStatuses,
} from "../ports/mempool-store.ts";

/** An entry plus its checksummed sender, the claim that holds it while `bundling`, and where it is indexed. */
interface Stored extends MempoolEntry {
  sender: Address;
  claimedBy?: string | undefined;
  claimedUntil?: number | undefined;
  /**
   * Its `senderKey`s while in the pool: its sender's in `bySender` first, then its factory's and
   * paymaster's in `byEntity`. Built as it enters the pool, to take it out of the indexes as it
   * leaves without building them again; dropped then, as the store keeps many final operations.
   */
  indexKeys: string[] | undefined;
  /** While in a final status, the sequence number it became final at (`finalQueue`). */
  finalSequence?: number | undefined;
}

/** Whether operations in `status` are still in the pool; those in the others are final. */
function inPool(status: UserOperationStatus): boolean {
  return status === "pending" || status === "bundling" || status === "submitted";
}

/** Options of `createMemoryMempoolStore`. */
export interface MemoryMempoolStoreOptions {
  /**
   * How many operations in a final status (included, failed, dropped) to remember, the oldest
   * forgotten first, so that a long-running pool's memory follows what it holds now. Lookups of
   * an included operation still find it on chain by its event. Default 100,000.
   */
  keepFinal?: number;
}

/**
 * A `MempoolStore` in process memory: the reference implementation of the port's rules, and a
 * store for an embedded engine that keeps nothing across restarts (`memoryStores` in
 * `@bundlekit/effect`), research replays and tests. It keeps the operations in the pool apart
 * from the final ones and remembers only the last `keepFinal` of those, so a pool that has seen
 * millions costs what it holds now.
 * Nothing survives a restart. Every method runs synchronously to completion, so each is atomic,
 * and entries are copied in and out so callers cannot alter them.
 *
 * How the rules read (the SQL stores in `@bundlekit/storage-kysely` follow the same reading):
 * - hashes and addresses match regardless of letter case; addresses are kept checksummed;
 * - ties in age (`receivedAt`) break by hash, so "oldest first" is deterministic;
 * - an expired claim stays `bundling` until it is claimed again: only `claimForBundle` has a `now`;
 * - `admit` keeps the replaced operation as `dropped` ("replaced by <hash>"), and overwrites a
 *   `dropped` or `failed` operation sent again;
 * - `failed` and `dropped` are final; `markIncluded` applies in any status (the chain has the
 *   last word).
 */
export function createMemoryMempoolStore(options: MemoryMempoolStoreOptions = {}): MempoolStore {
  const keepFinal = options.keepFinal ?? 100_000;
  if (!(Number.isInteger(keepFinal) && keepFinal >= 0)) throw new RangeError(`keepFinal must be a whole number of operations, not ${keepFinal}`);
  const entries = new Map<Hash, Stored>();
  /** `senderKey` → hashes of the sender's operations on an EntryPoint that are still in the pool. */
  const bySender = new Map<string, Set<Hash>>();
  /** `senderKey` of a factory or paymaster → hashes of the operations in the pool that name it. */
  const byEntity = new Map<string, Set<Hash>>();
  /**
   * The operations still in the pool (pending, bundling or submitted), whatever their status among
   * those: an operation moves from one to the next with no index to change. Every method but `get`
   * and the `list` of a final status reads only these.
   */
  const pool = new Map<Hash, Stored>();
  /** How many operations are kept in each status. */
  const counts = Object.fromEntries(userOperationStatuses.map((status) => [status, 0])) as Record<UserOperationStatus, number>;

  /**
   * Operations in a final status, oldest first: the first to forget beyond `keepFinal`. A queue
   * (entries with the sequence number each became final at, stale once it leaves or becomes final
   * again) rather than a set deleted from its front: a set iterates over the holes its deletions
   * leave, thousands per operation in a pool that forgets one final operation per operation.
   */
  const finalQueue: { entry: Stored; sequence: number }[] = [];
  let finalHead = 0;
  let finalSequence = 0;
  const finalCount = () => counts.included + counts.failed + counts.dropped;

  /** Keep `counts`, `pool`, `bySender`, `byEntity` and `finalQueue` true after `entry` changed from status `from`. */
  function reindex(entry: Stored, from: UserOperationStatus | undefined) {
    const to = entry.status;
    if (from === to) return;
    if (from !== undefined) counts[from]--;
    counts[to]++;
    const wasInPool = from !== undefined && inPool(from);
    const isInPool = inPool(to);
    if (isInPool) entry.finalSequence = undefined;
    else {
      entry.finalSequence = ++finalSequence;
      finalQueue.push({ entry, sequence: finalSequence });
    }
    while (finalCount() > keepFinal) forgetOldestFinal();
    if (finalHead > 1024 && finalHead * 2 > finalQueue.length) {
      finalQueue.splice(0, finalHead);
      finalHead = 0;
    }
    if (wasInPool === isInPool) return;
    if (isInPool) pool.set(entry.userOpHash, entry);
    else pool.delete(entry.userOpHash);
    indexInPool(entry, isInPool);
  }

  /** Forget the final operation that became final the longest ago. */
  function forgetOldestFinal() {
    const { entry: oldest, sequence } = finalQueue[finalHead++]!;
    if (oldest.finalSequence !== sequence) return;
    counts[oldest.status]--;
    entries.delete(oldest.userOpHash);
  }

  /**
   * The entry of `hash`, in any letter case. Looked up as given first: the keys are in lower case,
   * as most hashes arrive, so a hash found needs no test of its case.
   */
  function find(hash: Hash): Stored | undefined {
    const entry = entries.get(hash);
    if (entry) return entry;
    const key = hashKey(hash);
    return key === hash ? undefined : entries.get(key);
  }

  /** Add `entry` to (or, not `enters`, take it from) the sender and entity indexes of operations in the pool. */
  function indexInPool(entry: Stored, enters: boolean) {
    if (enters) entry.indexKeys = entitiesOf(entry.userOperation).map((entity) => senderKey(entry.entryPoint, entity.address));
    const keys = entry.indexKeys ?? [];
    for (let i = 0; i < keys.length; i++) {
      const index = i === 0 ? bySender : byEntity;
      const hashes = index.get(keys[i]!);
      if (enters) {
        if (hashes) hashes.add(entry.userOpHash);
        else index.set(keys[i]!, new Set([entry.userOpHash]));
      } else if (hashes) {
        hashes.delete(entry.userOpHash);
        if (hashes.size === 0) index.delete(keys[i]!);
      }
    }
    if (!enters) entry.indexKeys = undefined;
  }

  /** The sender's operations in the pool, by nonce (ties oldest first). */
  function senderOperations(entryPoint: Address, sender: Address): MempoolEntry[] {
    const hashes = bySender.get(senderKey(entryPoint, sender)) ?? [];
    return [...hashes].map((hash) => entries.get(hash)!).sort(bySenderOrder).map(toEntry);
  }

  /** Store `entry` as a fresh `pending` operation, over a final one of the same hash (`known`). */
  function insert(entry: NewMempoolEntry, known: Stored | undefined): void {
    const stored: Stored = {
      ...copyPlain(entry),
      userOpHash: hashKey(entry.userOpHash),
      entryPoint: getAddress(entry.entryPoint),
      sender: getAddress(entry.userOperation.sender),
      status: "pending",
      updatedAt: entry.receivedAt,
      indexKeys: undefined,
    };
    if (known) known.finalSequence = undefined;
    entries.set(stored.userOpHash, stored);
    reindex(stored, known?.status);
  }

  /** Apply `change` to each known operation among `hashes` whose status is in `from`. */
  function transition(
    hashes: readonly Hash[],
    from: readonly UserOperationStatus[],
    change: (entry: Stored) => void,
    { keepClaim = false } = {},
  ) {
    for (const hash of hashes) {
      const entry = find(hash);
      if (entry && from.includes(entry.status)) {
        const was = entry.status;
        change(entry);
        reindex(entry, was);
        if (keepClaim) continue;
        entry.claimedBy = undefined;
        entry.claimedUntil = undefined;
      }
    }
  }

  return {
    async admit(entry, decide) {
      const known = find(entry.userOpHash);
      if (known && !readmissibleStatuses.includes(known.status)) throw new DuplicateUserOperationError(entry.userOpHash);
      const admission = decide(senderOperations(entry.entryPoint, entry.userOperation.sender));
      const replaced = admission.replaces && find(admission.replaces.userOpHash);
      if (admission.replaces && replaced?.status !== "pending") {
        throw new MempoolRejectionError("the operation it would replace is already being bundled", {
          replacing: admission.replaces.userOpHash,
        });
      }
      if (replaced) {
        Object.assign(replaced, { status: "dropped", failureReason: replacedReason(entry.userOpHash), updatedAt: entry.receivedAt });
        reindex(replaced, "pending");
      }
      insert(entry, known);
      return admission;
    },

    async get(userOpHash) {
      const entry = find(userOpHash);
      return entry && toEntry(entry);
    },

    async listBySender(entryPoint, sender) {
      return senderOperations(entryPoint, sender);
    },

    async listByEntity(entryPoint, address) {
      const hashes = byEntity.get(senderKey(entryPoint, address)) ?? [];
      return [...hashes].map((hash) => entries.get(hash)!).sort(byAge).map(toEntry);
    },

    async list(status, options = {}) {
      const entryPoint = options.entryPoint && getAddress(options.entryPoint);
      const listed = (entry: Stored) => entry.status === status && (!entryPoint || entry.entryPoint === entryPoint);
      const inStatus = inPool(status) ? pool : entries;
      if (options.limit === 1) {
        // The oldest alone (is there anything to bundle?): found without sorting the pool.
        let oldest: Stored | undefined;
        for (const entry of inStatus.values()) if (listed(entry) && (!oldest || byAge(entry, oldest) < 0)) oldest = entry;
        return oldest ? [toEntry(oldest)] : [];
      }
      const found = [...inStatus.values()].filter(listed).sort(byAge);
      return found.slice(0, options.limit ?? found.length).map(toEntry);
    },

    async countByStatus() {
      return { ...counts };
    },

    async claimForBundle({ entryPoint, limit, perSender = 1, claimant, leaseMs, now }) {
      const on = getAddress(entryPoint);
      const claimed = (entry: Stored) => entry.status === "bundling" && entry.claimedUntil! > now;
      // Senders with an operation sent or claimed are busy: a sender's nonces must land in order.
      const busySenders = new Set<Address>();
      for (const entry of pool.values()) {
        if (entry.entryPoint === on && (entry.status === "submitted" || claimed(entry))) busySenders.add(entry.sender);
      }
      // Per free sender (none of its operations is submitted or claimed), its lowest nonces.
      const ofSender = new Map<Address, Stored[]>();
      for (const entry of pool.values()) {
        if (entry.entryPoint !== on || busySenders.has(entry.sender)) continue;
        const entries = ofSender.get(entry.sender);
        if (entries) entries.push(entry);
        else ofSender.set(entry.sender, [entry]);
      }
      const next = [...ofSender.values()].flatMap((entries) => entries.sort(bySenderOrder).slice(0, perSender));
      const picked = next.sort(byAge).slice(0, Math.max(0, limit));
      for (const entry of picked) {
        const was = entry.status;
        Object.assign(entry, {
          status: "bundling",
          claimedBy: claimant,
          claimedUntil: now + leaseMs,
          updatedAt: now,
        });
        reindex(entry, was);
      }
      return picked.map(toEntry);
    },

    async markSubmitted(userOpHashes, transactionHash, now) {
      transition(
        userOpHashes,
        returnable,
        (entry) => {
          Object.assign(entry, { status: "submitted", transactionHash, inclusion: undefined, updatedAt: now });
        },
        { keepClaim: true },
      );
    },

    async renewClaims(userOpHashes, claimant, until) {
      for (const hash of userOpHashes) {
        const entry = find(hash);
        if (entry && (entry.status === "bundling" || entry.status === "submitted") && entry.claimedBy === claimant) {
          entry.claimedUntil = until;
        }
      }
    },

    async adoptSubmitted({ claimant, previousClaimant, leaseMs, now, limit }) {
      const adoptable = (entry: Stored) =>
        entry.status === "submitted" &&
        (entry.claimedUntil === undefined || entry.claimedUntil <= now || (previousClaimant !== undefined && entry.claimedBy === previousClaimant));
      const picked = [...pool.values()].filter(adoptable).sort(byAge).slice(0, Math.max(0, limit));
      for (const entry of picked) Object.assign(entry, { claimedBy: claimant, claimedUntil: now + leaseMs });
      return picked.map(toEntry);
    },

    async markIncluded(userOpHash, inclusion, now) {
      transition([userOpHash], userOperationStatuses, (entry) => {
        Object.assign(entry, {
          status: "included",
          transactionHash: inclusion.transactionHash,
          inclusion: { ...inclusion },
          failureReason: undefined,
          updatedAt: now,
        });
      });
    },

    async markFailed(userOpHashes, reason, now) {
      transition(userOpHashes, ["pending", "bundling", "submitted"], (entry) => {
        Object.assign(entry, { status: "failed", failureReason: reason, updatedAt: now });
      });
    },

    async drop(userOpHashes, reason, now) {
      transition(userOpHashes, notSent, (entry) => {
        Object.assign(entry, { status: "dropped", failureReason: reason, updatedAt: now });
      });
    },

    async expire(olderThan, now) {
      const expired = [...pool.values()]
        .filter((entry) => entry.status === "pending" && entry.receivedAt < olderThan)
        .sort(byAge)
        .map((entry) => entry.userOpHash);
      transition(expired, ["pending"], (entry) => {
        Object.assign(entry, { status: "dropped", failureReason: "expired", updatedAt: now });
      });
      return expired;
    },

    async clear({ entryPoint, now }) {
      const on = entryPoint && getAddress(entryPoint);
      const cleared = [...pool.values()]
        .filter((entry) => notSent.includes(entry.status) && (!on || entry.entryPoint === on))
        .sort(byAge)
        .map((entry) => entry.userOpHash);
      transition(cleared, notSent, (entry) => {
        Object.assign(entry, { status: "dropped", failureReason: "cleared", updatedAt: now });
      });
      return cleared;
    },

    async releaseClaims(claimant, now) {
      const held = [...pool.values()].filter((entry) => entry.status === "bundling" && entry.claimedBy === claimant).sort(byAge);
      for (const entry of held) {
        Object.assign(entry, { status: "pending", claimedBy: undefined, claimedUntil: undefined, updatedAt: now });
        reindex(entry, "bundling");
      }
      return held.map((entry) => entry.userOpHash);
    },

    async requeue(userOpHashes, now) {
      transition(userOpHashes, returnable, (entry) => {
        Object.assign(entry, { status: "pending", transactionHash: undefined, inclusion: undefined, updatedAt: now });
      });
    },
  };
}

/** What may go back to `submitted` or `pending`: also `included`, when its block leaves the canonical chain. */
const returnable: readonly UserOperationStatus[] = ["bundling", "submitted", "included"];

/** Statuses of operations not yet sent: what `drop` and `clear` take. */
const notSent: readonly UserOperationStatus[] = ["pending", "bundling"];

/** The `failureReason` of an operation that `admit` swapped out. */
function replacedReason(replacementHash: Hash): string {
  return `replaced by ${replacementHash.toLowerCase()}`;
}

/**
 * A hash as the store keys it, in lower case. Most hashes arrive in lower case already: those are
 * kept as given, for a lower-case copy would be a new string that each map must hash again.
 */
function hashKey(hash: Hash): Hash {
  return mayChangeCase.test(hash) ? (hash.toLowerCase() as Hash) : hash;
}

/** Characters `toLowerCase` may change: upper-case letters, and anything beyond ASCII. */
const mayChangeCase = /[A-Z\u0080-\uffff]/;

/** The key of an address on an EntryPoint in `bySender` and `byEntity`: both in lower case, so any casing matches. */
function senderKey(entryPoint: Address, sender: Address): string {
  return `${entryPoint.toLowerCase()}/${sender.toLowerCase()}`;
}

/** Oldest first; ties by hash. */
function byAge(a: MempoolEntry, b: MempoolEntry): number {
  return (
    a.receivedAt - b.receivedAt ||
    (a.userOpHash < b.userOpHash ? -1 : a.userOpHash > b.userOpHash ? 1 : 0)
  );
}

/** Lowest nonce first, then oldest. */
function bySenderOrder(a: MempoolEntry, b: MempoolEntry): number {
  const nonceA = a.userOperation.nonce;
  const nonceB = b.userOperation.nonce;
  return nonceA < nonceB ? -1 : nonceA > nonceB ? 1 : byAge(a, b);
}

/**
 * A deep copy of plain data (objects, arrays, strings, numbers, bigints), as `structuredClone` makes
 * it but several times faster: the store copies every entry it takes in and every one it hands
 * out, so that no caller holds what it keeps. An object is copied whole by spreading it, then
 * only its fields that are objects are copied again. Anything else inside goes through `structuredClone`.
 */
function copyPlain<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyPlain) as T;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy = { ...value } as Record<string, unknown>;
  for (const key in copy) {
    const field = copy[key];
    if (typeof field === "object" && field !== null) copy[key] = copyPlain(field);
  }
  return copy as T;
}

/** The store's own fields of `Stored`, never handed out. */
const bookkeeping = new Set(["sender", "claimedBy", "claimedUntil", "indexKeys", "finalSequence"]);
/** Optional fields of `MempoolEntry`, left out when unset. */
const optional = new Set(["transactionHash", "inclusion", "failureReason", "validation", "paymasterContextSize"]);

/**
 * A copy without the bookkeeping, and without unset optional fields: built in one pass, the
 * fields in the order they are stored, rather than copied whole and then deleted from (which
 * also leaves the copy slow to read).
 */
function toEntry(stored: Stored): MempoolEntry {
  const entry: Record<string, unknown> = {};
  for (const key in stored) {
    const value = (stored as unknown as Record<string, unknown>)[key];
    if (bookkeeping.has(key) || (value === undefined && optional.has(key))) continue;
    entry[key] = typeof value === "object" && value !== null ? copyPlain(value) : value;
  }
  return entry as unknown as MempoolEntry;
}
