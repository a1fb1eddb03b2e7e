import type { Address } from "viem";

/** The ERC-7562 counters of one entity address on one EntryPoint. */
export interface ReputationEntry {
  address: Address;
  /** Operations naming this entity that were admitted to the mempool. */
  opsSeen: number;
  /** Of those, how many were later found on chain. */
  opsIncluded: number;
}

/** One hour: ERC-7562 decays the counters by 23/24 this often. */
export const reputationDecayIntervalMs = 3_600_000;

/**
 * ERC-7562 reputation, per entity address (account, factory, paymaster, aggregator) per
 * EntryPoint. Intent-level: each method is one event of the rules, and each is atomic. Entity
 * addresses are given and returned checksummed (`getAddress`, as `entitiesOf` gives them): the
 * engine checksums an operation's entities once, and a store need not again. EntryPoints match
 * regardless of letter case. Counters never go below zero.
 * Implementations: `createMemoryReputationStore` (the engine's default), SQLite and PostgreSQL
 * (`@bundlekit/storage-kysely`); every one passes `reputationStoreContract` (`@bundlekit/testing`).
 */
export interface ReputationStore {
  /** The counters of those of `addresses` that are tracked on `entryPoint`, in the order of `addresses`. */
  get(entryPoint: Address, addresses: readonly Address[]): Promise<ReputationEntry[]>;
  /** Every tracked address on `entryPoint`, ordered by address. */
  list(entryPoint: Address): Promise<ReputationEntry[]>;
  /** An operation naming each of `addresses` was admitted: `opsSeen + 1`, tracking new ones. Each address counts once. */
  recordSeen(entryPoint: Address, addresses: readonly Address[]): Promise<void>;
  /**
   * Take back one seen operation of each of `addresses` (`opsSeen - 1`): its operation was
   * replaced by one without it, or failed through another entity's fault.
   */
  retractSeen(entryPoint: Address, addresses: readonly Address[]): Promise<void>;
  /** An operation naming each of `addresses` was included on chain: `opsIncluded + 1` for tracked ones. */
  recordIncluded(entryPoint: Address, addresses: readonly Address[]): Promise<void>;
  /** Overwrite the counters of these entities (operators and test suites). */
  set(entryPoint: Address, entries: readonly ReputationEntry[]): Promise<void>;
  /**
   * Apply the hourly decay: for each full `reputationDecayIntervalMs` since the last decay, every
   * counter becomes `floor(value * 23 / 24)`; entries at 0/0 are forgotten. The first call only
   * starts the clock. Safe to call often, and from several engines sharing one database.
   */
  decay(now: number): Promise<void>;
  /** Forget every entry, on one EntryPoint or on all. */
  clear(entryPoint?: Address): Promise<void>;
  /** Release connections. Optional: stores without resources omit it. */
  close?(): Promise<void>;
}
