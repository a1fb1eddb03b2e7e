import type { Address } from "viem";
import { getAddress } from "../utils/get-address.ts";
import {
  type ReputationEntry,
  type ReputationStore,
  reputationDecayIntervalMs,
} from "../ports/reputation-store.ts";

/** Hours of decay beyond which every counter of practical size is zero ((23/24)^1000 < 1e-18). */
const maxDecaySteps = 1000;

/**
 * A `ReputationStore` in process memory: the reference implementation of the port's rules, and
 * the engine's default (reputation then starts afresh on restart, as in the reference bundler).
 * Every method runs to completion synchronously, so each is atomic.
 */
export function createMemoryReputationStore(): ReputationStore {
  /** Checksummed `entryPoint` → address → counters. */
  const byEntryPoint = new Map<Address, Map<Address, ReputationEntry>>();
  let decayedAt: number | undefined;

  /** The entry point last asked for, as given, and its entries: an engine asks for one EntryPoint almost always. */
  let last: { given: Address; entries: Map<Address, ReputationEntry> } | undefined;
  const entriesOf = (entryPoint: Address) => {
    if (last?.given === entryPoint) return last.entries;
    const key = getAddress(entryPoint);
    let entries = byEntryPoint.get(key);
    if (!entries) {
      entries = new Map();
      byEntryPoint.set(key, entries);
    }
    last = { given: entryPoint, entries };
    return entries;
  };
  /** Each of `addresses` once: checksummed as the port takes them, one address is one string. */
  const unique = (addresses: readonly Address[]) => (addresses.length < 2 ? addresses : [...new Set(addresses)]);

  return {
    async get(entryPoint, addresses) {
      const entries = entriesOf(entryPoint);
      return unique(addresses).flatMap((address) => {
        const entry = entries.get(address);
        return entry ? [{ ...entry }] : [];
      });
    },

    async list(entryPoint) {
      return [...entriesOf(entryPoint).values()]
        .sort((a, b) => (a.address.toLowerCase() < b.address.toLowerCase() ? -1 : 1))
        .map((entry) => ({ ...entry }));
    },

    async recordSeen(entryPoint, addresses) {
      const entries = entriesOf(entryPoint);
      for (const address of unique(addresses)) {
        const entry = entries.get(address) ?? { address, opsSeen: 0, opsIncluded: 0 };
        entries.set(address, { ...entry, opsSeen: entry.opsSeen + 1 });
      }
    },

    async retractSeen(entryPoint, addresses) {
      const entries = entriesOf(entryPoint);
      for (const address of unique(addresses)) {
        const entry = entries.get(address);
        if (entry) entry.opsSeen = Math.max(0, entry.opsSeen - 1);
      }
    },

    async recordIncluded(entryPoint, addresses) {
      const entries = entriesOf(entryPoint);
      for (const address of unique(addresses)) {
        const entry = entries.get(address);
        if (entry) entry.opsIncluded += 1;
      }
    },

    async set(entryPoint, updates) {
      const entries = entriesOf(entryPoint);
      for (const { address, opsSeen, opsIncluded } of updates) {
        entries.set(address, {
          address,
          opsSeen: Math.max(0, opsSeen),
          opsIncluded: Math.max(0, opsIncluded),
        });
      }
    },

    async decay(now) {
      if (decayedAt === undefined) {
        decayedAt = now;
        return;
      }
      const steps = Math.floor((now - decayedAt) / reputationDecayIntervalMs);
      if (steps <= 0) return;
      decayedAt += steps * reputationDecayIntervalMs;
      for (const entries of byEntryPoint.values()) {
        for (const [address, entry] of entries) {
          for (let i = 0; i < Math.min(steps, maxDecaySteps); i++) {
            entry.opsSeen = Math.floor((entry.opsSeen * 23) / 24);
            entry.opsIncluded = Math.floor((entry.opsIncluded * 23) / 24);
          }
          if (entry.opsSeen === 0 && entry.opsIncluded === 0) entries.delete(address);
        }
      }
    },

    async clear(entryPoint) {
      if (entryPoint) byEntryPoint.delete(getAddress(entryPoint));
      else byEntryPoint.clear();
      last = undefined;
    },
  };
}
