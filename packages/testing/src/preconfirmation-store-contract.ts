import type { Hash } from "viem";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalEntryPoints, type Preconfirmation, type PreconfirmationStore } from "@bundlekit/core";
import { fixtureAccount, fixtureChainId } from "./fixtures.ts";

/** A store for one contract test, with what the contract needs to know about its backend. */
export interface PreconfirmationStoreUnderTest {
  store: PreconfirmationStore;
  /** Remove what the store left behind (files, schemas), after the contract closed every store it opened. */
  cleanup?: () => Promise<void>;
  /** Persistent stores: open the same data again (`store` is closed first). */
  reopen?: () => Promise<PreconfirmationStore>;
  /** Stores that share a database: one more instance on the same data. */
  openAnother?: () => Promise<PreconfirmationStore>;
}

const hash = (n: number): Hash => `0x${n.toString(16).padStart(64, "0")}`;

/** A signed promise of operation `n` for block `blockNumber`, as the engine makes it. */
function promised(n: number, blockNumber = 100n): Preconfirmation {
  return {
    userOpHash: hash(n),
    entryPoint: canonicalEntryPoints["0.7"],
    chainId: fixtureChainId,
    blockNumber,
    transactionHash: hash(0xabc000 + n),
    signer: fixtureAccount(9).address,
    signature: `0x${"1b".repeat(65)}`,
    status: "promised",
  };
}

/**
 * The behaviour every `PreconfirmationStore` owes the engine, as a vitest suite that each adapter
 * runs against itself. `makeStore` runs before every test and must return an empty store.
 */
export function preconfirmationStoreContract(name: string, makeStore: () => Promise<PreconfirmationStoreUnderTest>): void {
  describe(`PreconfirmationStore contract: ${name}`, () => {
    let underTest: PreconfirmationStoreUnderTest;
    let store: PreconfirmationStore;
    const open = new Set<PreconfirmationStore>();

    function opened(another: PreconfirmationStore): PreconfirmationStore {
      open.add(another);
      return another;
    }

    beforeEach(async () => {
      underTest = await makeStore();
      store = opened(underTest.store);
    });

    afterEach(async () => {
      for (const which of [...open]) {
        open.delete(which);
        await which.close?.();
      }
      await underTest.cleanup?.();
    });

    it("returns a promise as it was recorded, whatever the letter case of the hash asked for", async () => {
      const unsigned = { ...promised(2), signature: null, signer: "0x0000000000000000000000000000000000000000" as const };
      await store.promise([promised(1, 123_456_789n), unsigned]);
      expect(await store.get(hash(1))).toEqual(promised(1, 123_456_789n));
      expect(await store.get(hash(2).toUpperCase().replace("0X", "0x") as Hash)).toEqual(unsigned);
      expect(await store.get(hash(3))).toBeUndefined();
      await store.promise([]);
    });

    it("replaces an operation's earlier promise with a later one", async () => {
      await store.promise([promised(1, 100n)]);
      await store.settle(hash(1), { status: "broken", reason: "the promised block 100 passed without it" });
      await store.promise([promised(1, 105n)]);
      expect(await store.get(hash(1))).toEqual(promised(1, 105n));
    });

    it("settles a promise once: kept or broken with its reason, then final", async () => {
      await store.promise([promised(1), promised(2)]);
      expect(await store.settle(hash(1), { status: "kept" })).toEqual({ ...promised(1), status: "kept" });
      const reason = "the promised block 100 passed without it";
      expect(await store.settle(hash(2), { status: "broken", reason })).toEqual({ ...promised(2), status: "broken", reason });
      expect(await store.settle(hash(1), { status: "broken", reason })).toBeUndefined();
      expect(await store.settle(hash(2), { status: "kept" })).toBeUndefined();
      expect(await store.settle(hash(3), { status: "kept" })).toBeUndefined();
      expect(await store.get(hash(1))).toEqual({ ...promised(1), status: "kept" });
      expect(await store.get(hash(2))).toEqual({ ...promised(2), status: "broken", reason });
    });

    it("keeps promises across a restart (persistent stores)", async (context) => {
      if (!underTest.reopen) return context.skip();
      await store.promise([promised(1)]);
      await store.settle(hash(1), { status: "kept" });
      await store.promise([promised(2)]);
      open.delete(store);
      await store.close?.();
      store = opened(await underTest.reopen());
      expect(await store.get(hash(1))).toEqual({ ...promised(1), status: "kept" });
      expect(await store.get(hash(2))).toEqual(promised(2));
    });

    it("shows each engine on one database the promises of the others, and settles each once (shared stores)", async (context) => {
      if (!underTest.openAnother) return context.skip();
      const other = opened(await underTest.openAnother());
      await store.promise([promised(1)]);
      expect(await other.get(hash(1))).toEqual(promised(1));
      const outcomes = await Promise.all([store.settle(hash(1), { status: "kept" }), other.settle(hash(1), { status: "kept" })]);
      expect(outcomes.filter((o) => o !== undefined)).toHaveLength(1);
    });
  });
}
