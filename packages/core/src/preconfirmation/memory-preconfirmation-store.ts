import type { Hash } from "viem";
import type { Preconfirmation, PreconfirmationStore } from "../ports/preconfirmation-store.ts";

/** Preconfirmations in process memory: the engine's default; lost on restart, not shared. */
export function createMemoryPreconfirmationStore(): PreconfirmationStore {
  const byHash = new Map<string, Preconfirmation>();
  const key = (hash: Hash) => hash.toLowerCase();
  return {
    async promise(preconfirmations) {
      for (const preconfirmation of preconfirmations) byHash.set(key(preconfirmation.userOpHash), { ...preconfirmation });
    },
    async get(userOpHash) {
      const found = byHash.get(key(userOpHash));
      return found && { ...found };
    },
    async settle(userOpHash, outcome) {
      const found = byHash.get(key(userOpHash));
      if (found?.status !== "promised") return undefined;
      const settled: Preconfirmation = { ...found, ...outcome };
      byHash.set(key(userOpHash), settled);
      return { ...settled };
    },
  };
}
