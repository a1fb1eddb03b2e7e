import type { Address } from "viem";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalEntryPoints, reputationDecayIntervalMs, type ReputationStore } from "@bundlekit/core";
import { fixtureAccount } from "./fixtures.ts";

/** A store for one contract test, with what the contract needs to know about its backend. */
export interface ReputationStoreUnderTest {
  store: ReputationStore;
  /** Remove what the store left behind (files, schemas), after the contract closed every store it opened. */
  cleanup?: () => Promise<void>;
  /** Persistent stores: open the same data again (`store` is closed first). */
  reopen?: () => Promise<ReputationStore>;
  /** Stores that share a database: one more instance on the same data. */
  openAnother?: () => Promise<ReputationStore>;
}

const ep07 = canonicalEntryPoints["0.7"];
const ep08 = canonicalEntryPoints["0.8"];
const t0 = 1_750_000_000_000;
const hour = reputationDecayIntervalMs;
const paymaster: Address = "0x0000000000325602a77416A16136FDafd04b299f";
const factory: Address = "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985";
const account = () => fixtureAccount(1).address;

/**
 * The behaviour every `ReputationStore` owes the engine, as a vitest suite that each adapter runs
 * against itself. `makeStore` runs before every test and must return an empty store.
 */
export function reputationStoreContract(
  name: string,
  makeStore: () => Promise<ReputationStoreUnderTest>,
): void {
  describe(`ReputationStore contract: ${name}`, () => {
    let underTest: ReputationStoreUnderTest;
    let store: ReputationStore;
    const open = new Set<ReputationStore>();
    let cleanup: (() => Promise<void>) | undefined;

    function opened(another: ReputationStore): ReputationStore {
      open.add(another);
      return another;
    }

    beforeEach(async () => {
      underTest = await makeStore();
      cleanup = underTest.cleanup;
      store = opened(underTest.store);
    });

    afterEach(async () => {
      for (const which of [...open]) {
        open.delete(which);
        await which.close?.();
      }
      await cleanup?.();
      cleanup = undefined;
    });

    const seen = async (times: number, addresses: Address[], entryPoint = ep07) => {
      for (let i = 0; i < times; i++) await store.recordSeen(entryPoint, addresses);
    };

    describe("counting", () => {
      it("starts tracking an address when it is first seen, and counts each sighting", async () => {
        expect(await store.list(ep07)).toEqual([]);
        await seen(3, [paymaster, factory]);
        await seen(1, [paymaster]);
        expect(await store.get(ep07, [paymaster, factory])).toEqual([
          { address: paymaster, opsSeen: 4, opsIncluded: 0 },
          { address: factory, opsSeen: 3, opsIncluded: 0 },
        ]);
      });

      it("counts an address named twice in one call once", async () => {
        await store.recordSeen(ep07, [paymaster, paymaster]);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 1, opsIncluded: 0 },
        ]);
      });

      it("matches EntryPoints in any letter case", async () => {
        await store.recordSeen(ep07.toLowerCase() as Address, [paymaster]);
        await store.recordIncluded(ep07.toUpperCase().replace("0X", "0x") as Address, [paymaster]);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 1, opsIncluded: 1 },
        ]);
      });

      it("counts inclusions only of tracked addresses", async () => {
        await seen(2, [paymaster]);
        await store.recordIncluded(ep07, [paymaster, factory]);
        expect(await store.list(ep07)).toEqual([
          { address: paymaster, opsSeen: 2, opsIncluded: 1 },
        ]);
      });

      it("takes back a sighting, never below zero, and never tracks an unknown address", async () => {
        await seen(2, [paymaster]);
        await store.retractSeen(ep07, [paymaster, factory]);
        expect(await store.list(ep07)).toEqual([
          { address: paymaster, opsSeen: 1, opsIncluded: 0 },
        ]);
        await store.retractSeen(ep07, [paymaster]);
        await store.retractSeen(ep07, [paymaster]);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 0, opsIncluded: 0 },
        ]);
      });

      it("keeps EntryPoints apart", async () => {
        await seen(2, [paymaster], ep07);
        await seen(5, [paymaster], ep08);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 2, opsIncluded: 0 },
        ]);
        expect(await store.get(ep08, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 5, opsIncluded: 0 },
        ]);
      });

      it("lists every tracked address ordered by address; get leaves out untracked ones", async () => {
        const addresses = [paymaster, factory, account()];
        await seen(1, addresses);
        const sorted = addresses.toSorted((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
        expect((await store.list(ep07)).map((e) => e.address)).toEqual(sorted);
        expect(await store.get(ep07, [fixtureAccount(2).address])).toEqual([]);
        expect(await store.get(ep07, [])).toEqual([]);
      });

      it("counts concurrent sightings without losing any", async () => {
        await Promise.all(Array.from({ length: 20 }, () => store.recordSeen(ep07, [paymaster])));
        expect((await store.get(ep07, [paymaster]))[0]?.opsSeen).toBe(20);
      });
    });

    describe("set and clear", () => {
      it("overwrites counters, creating entries as needed", async () => {
        await seen(3, [paymaster]);
        await store.set(ep07, [
          { address: paymaster, opsSeen: 100, opsIncluded: 2 },
          { address: factory, opsSeen: 0, opsIncluded: 0 },
        ]);
        expect(await store.list(ep07)).toEqual(
          [
            { address: paymaster, opsSeen: 100, opsIncluded: 2 },
            { address: factory, opsSeen: 0, opsIncluded: 0 },
          ].toSorted((a, b) => (a.address.toLowerCase() < b.address.toLowerCase() ? -1 : 1)),
        );
      });

      it("clears one EntryPoint, or all", async () => {
        await seen(1, [paymaster], ep07);
        await seen(1, [paymaster], ep08);
        await store.clear(ep07);
        expect(await store.list(ep07)).toEqual([]);
        expect(await store.list(ep08)).toHaveLength(1);
        await store.clear();
        expect(await store.list(ep08)).toEqual([]);
      });
    });

    describe("decay", () => {
      it("decays by 23/24, floored, once per full hour since the first call", async () => {
        await store.set(ep07, [{ address: paymaster, opsSeen: 480, opsIncluded: 48 }]);
        await store.decay(t0); // starts the clock
        await store.decay(t0 + hour - 1);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 480, opsIncluded: 48 },
        ]);
        await store.decay(t0 + hour);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 460, opsIncluded: 46 },
        ]);
        // Two more hours at once: two steps, each floored (460 → 440 → 421; 46 → 44 → 42).
        await store.decay(t0 + 3 * hour + 5);
        expect(await store.get(ep07, [paymaster])).toEqual([
          { address: paymaster, opsSeen: 421, opsIncluded: 42 },
        ]);
        // The partial hour carried over: the next step is due at t0 + 4h.
        await store.decay(t0 + 4 * hour - 1);
        expect((await store.get(ep07, [paymaster]))[0]?.opsSeen).toBe(421);
        await store.decay(t0 + 4 * hour);
        expect((await store.get(ep07, [paymaster]))[0]?.opsSeen).toBe(403);
      });

      it("forgets entries that decay to 0/0, and keeps the rest", async () => {
        await store.set(ep07, [
          { address: paymaster, opsSeen: 1, opsIncluded: 0 },
          { address: factory, opsSeen: 24, opsIncluded: 0 },
        ]);
        await store.decay(t0);
        await store.decay(t0 + hour);
        expect(await store.list(ep07)).toEqual([{ address: factory, opsSeen: 23, opsIncluded: 0 }]);
      });

      it("decays a long absence to nothing", async () => {
        await store.set(ep08, [{ address: paymaster, opsSeen: 1_000_000, opsIncluded: 10_000 }]);
        await store.decay(t0);
        await store.decay(t0 + 24 * 365 * hour);
        expect(await store.list(ep08)).toEqual([]);
      });

      it("decays once per hour however many store instances share the data", async ({ skip }) => {
        if (!underTest.openAnother) return skip("the store does not share a database");
        const other = opened(await underTest.openAnother());
        await store.set(ep07, [{ address: paymaster, opsSeen: 480, opsIncluded: 0 }]);
        await store.decay(t0);
        await Promise.all([
          store.decay(t0 + hour),
          other.decay(t0 + hour),
          other.decay(t0 + hour + 10),
        ]);
        expect((await other.get(ep07, [paymaster]))[0]?.opsSeen).toBe(460);
      });
    });

    it("keeps counters and the decay clock across close and reopen", async ({ skip }) => {
      if (!underTest.reopen) return skip("the store does not persist");
      await seen(3, [paymaster, factory]);
      await store.recordIncluded(ep07, [factory]);
      await store.decay(t0);
      const before = await store.list(ep07);
      open.delete(store);
      await store.close?.();
      store = opened(await underTest.reopen());
      expect(await store.list(ep07)).toEqual(before);
      await store.set(ep07, [{ address: paymaster, opsSeen: 48, opsIncluded: 0 }]);
      await store.decay(t0 + hour);
      expect((await store.get(ep07, [paymaster]))[0]?.opsSeen).toBe(46);
    });
  });
}
