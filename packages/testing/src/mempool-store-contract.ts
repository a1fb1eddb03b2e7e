import type { Address, Hash } from "viem";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BundlerError, canonicalEntryPoints, type ClaimForBundleParameters, type DomainError, DuplicateUserOperationError, erc7562Admission, type MempoolEntry, MempoolRejectionError, type MempoolStore, type NewMempoolEntry, toRpcError } from "@bundlekit/core";
import { type FixtureEntryOptions, fixtureAccount, fixtureEntry, fixtureFactory, fixturePaymaster, replacingNothing } from "./fixtures.ts";

/** A store for one contract test, with what the contract needs to know about its backend. */
export interface MempoolStoreUnderTest {
  store: MempoolStore;
  /**
   * Remove what the store left behind (files, schemas). Runs after the contract has closed every
   * store it opened.
   */
  cleanup?: () => Promise<void>;
  /** Persistent stores: open the same data again, as a restarted engine would (`store` is closed first). */
  reopen?: () => Promise<MempoolStore>;
  /** Stores that share a database: one more instance on the same data, as a second engine opens it. */
  openAnother?: () => Promise<MempoolStore>;
}

const ep06 = canonicalEntryPoints["0.6"];
const ep07 = canonicalEntryPoints["0.7"];
const ep08 = canonicalEntryPoints["0.8"];
const t0 = 1_750_000_000_000;
const txHash: Hash = "0x2a4be8cb0dcf2ab7ab4d8c0d5c0fdab6b4c32b5e0c4f27e4f6b2e6c0b1a3d4e5";
const blockHash: Hash = "0x9e3b1f0e4b6f3ad7c1c2b0a8f1e4d2c3b5a6978812345678901234567890abcd";

/**
 * The behaviour every `MempoolStore` owes the engine, as a vitest suite. Each adapter runs it
 * against itself (one suite for every backend), so the memory store and the SQL stores cannot
 * drift apart. `makeStore` runs before every test and must return an empty store.
 */
export function mempoolStoreContract(
  name: string,
  makeStore: () => Promise<MempoolStoreUnderTest>,
): void {
  describe(`MempoolStore contract: ${name}`, () => {
    let underTest: MempoolStoreUnderTest;
    let store: MempoolStore;
    const open = new Set<MempoolStore>();

    /** Track a store so it is closed after the test. */
    function opened(another: MempoolStore): MempoolStore {
      open.add(another);
      return another;
    }

    async function close(which: MempoolStore): Promise<void> {
      if (open.delete(which)) await which.close?.();
    }

    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      underTest = await makeStore();
      cleanup = underTest.cleanup;
      store = opened(underTest.store);
    });

    afterEach(async () => {
      for (const which of [...open]) await close(which);
      await cleanup?.();
      cleanup = undefined; // a failed makeStore must not clean up the previous test twice
    });

    async function added(...options: FixtureEntryOptions[]): Promise<NewMempoolEntry[]> {
      const entries = await Promise.all(options.map((o) => fixtureEntry(o)));
      for (const entry of entries) await store.admit(entry, replacingNothing);
      return entries;
    }

    function claim(parameters: Partial<ClaimForBundleParameters> = {}, on: MempoolStore = store) {
      return on.claimForBundle({
        entryPoint: ep07,
        limit: 10,
        claimant: "engine-a",
        leaseMs: 30_000,
        now: t0 + 1_000,
        ...parameters,
      });
    }

    const hashes = (entries: readonly { userOpHash: Hash }[]) => entries.map((e) => e.userOpHash);
    const statusOf = async (hash: Hash) => (await store.get(hash))?.status;

    describe("admit and get", () => {
      async function expectRoundTrip(options: FixtureEntryOptions) {
        const [entry] = await added(options);
        const stored = await store.get(entry!.userOpHash);
        expect(stored).toStrictEqual({ ...entry, status: "pending", updatedAt: entry!.receivedAt });
        expect(typeof stored!.userOperation.nonce).toBe("bigint");
      }

      it("round-trips a v0.6 operation exactly, bigints intact", async () => {
        await expectRoundTrip({ version: "0.6", nonce: (0xbeefn << 64n) | 3n });
      });

      it("round-trips a v0.7 operation with factory and paymaster exactly", async () => {
        await expectRoundTrip({ version: "0.7", sponsored: true, nonce: 2n ** 200n + 1n });
      });

      it.each(["0.6", "0.7", "0.8"] as const)("round-trips a v%s operation with an EIP-7702 authorization exactly", async (version) => {
        await expectRoundTrip({ version, eip7702: true, nonce: 7n });
      });

      it("round-trips a v0.9 operation with a paymasterSignature exactly", async () => {
        await expectRoundTrip({ version: "0.9", sponsored: true, nonce: 9n });
      });

      it("keeps what safe validation learned about an operation (code hashes, storage touched) exactly", async () => {
        const entry = {
          ...(await fixtureEntry({ version: "0.7", sponsored: true })),
          validation: {
            codeHashes: { "0x91e60e0613810449d098b0b5ec8b51a0fe8c8985": `0x${"ab".repeat(32)}` as Hash },
            storageContracts: ["0x0000000000325602a77416a16136fdafd04b299f" as const],
          },
        };
        await store.admit(entry, replacingNothing);
        expect((await store.get(entry.userOpHash))?.validation).toStrictEqual(entry.validation);
        const [plain] = await added({ version: "0.7", sender: 3 });
        expect(await store.get(plain!.userOpHash)).not.toHaveProperty("validation");
      });

      it("keeps the size of the paymaster's validation context (LIM-050), absent when none was returned", async () => {
        const entry = { ...(await fixtureEntry({ version: "0.7", sponsored: true })), paymasterContextSize: 2048 };
        await store.admit(entry, replacingNothing);
        expect((await store.get(entry.userOpHash))?.paymasterContextSize).toBe(2048);
        const [plain] = await added({ version: "0.7", sender: 4 });
        expect(await store.get(plain!.userOpHash)).not.toHaveProperty("paymasterContextSize");
      });

      it("returns undefined for an unknown hash", async () => {
        const entry = await fixtureEntry();
        expect(await store.get(entry.userOpHash)).toBeUndefined();
      });

      it("matches hashes and addresses regardless of letter case", async () => {
        const [entry] = await added({ sender: 1, nonce: 5n });
        const upper = `0x${entry!.userOpHash.slice(2).toUpperCase()}` as Hash;
        expect((await store.get(upper))?.userOpHash).toBe(entry!.userOpHash);
        const found = await store.listBySender(
          ep07.toLowerCase() as Address,
          fixtureAccount(1).address.toLowerCase() as Address,
        );
        expect(hashes(found)).toEqual([entry!.userOpHash]);
      });
    });

    describe("listBySender", () => {
      const ofSender = async (sender: number, entryPoint: Address = ep07) =>
        hashes(await store.listBySender(entryPoint, fixtureAccount(sender).address));

      it("lists the sender's operations in the pool by nonce, whatever their age", async () => {
        const [n7, n5, n6] = await added(
          { sender: 1, nonce: 7n, receivedAt: t0 },
          { sender: 1, nonce: 5n, receivedAt: t0 + 1 },
          { sender: 1, nonce: 6n, receivedAt: t0 + 2 },
        );
        expect(await ofSender(1)).toEqual(hashes([n5!, n6!, n7!]));
      });

      it("orders nonces by value across nonce keys, wider than 64 bits", async () => {
        const [high, low] = await added({ sender: 1, nonce: 1n << 64n }, { sender: 1, nonce: 2n });
        expect(await ofSender(1)).toEqual(hashes([low!, high!]));
      });

      it("keeps operations while pending, bundling and submitted, and lets go once included, failed or dropped", async () => {
        const entries = await added({ sender: 1 }, { sender: 2 }, { sender: 3 }, { sender: 4 });
        await claim();
        expect((await store.listBySender(ep07, fixtureAccount(1).address))[0]).toMatchObject({ status: "bundling" });
        await store.markSubmitted(hashes(entries), txHash, t0 + 2_000);
        expect((await store.listBySender(ep07, fixtureAccount(1).address))[0]).toMatchObject({ status: "submitted" });
        await store.markIncluded(entries[1]!.userOpHash, { transactionHash: txHash, blockHash, blockNumber: 1n }, t0 + 3_000);
        await store.markFailed([entries[2]!.userOpHash], "bundle transaction reverted", t0 + 3_000);
        expect(await ofSender(1)).toEqual([entries[0]!.userOpHash]);
        for (const sender of [2, 3]) expect(await ofSender(sender)).toEqual([]);
      });

      it("looks within one EntryPoint and sender", async () => {
        const [on07, on08] = await added({ sender: 1, nonce: 5n }, { sender: 1, nonce: 5n, version: "0.8" }, { sender: 2, nonce: 5n });
        expect(await ofSender(1)).toEqual([on07!.userOpHash]);
        expect(await ofSender(1, ep08)).toEqual([on08!.userOpHash]);
        expect(await ofSender(3)).toEqual([]);
      });
    });

    describe("listByEntity", () => {
      const naming = async (address: Address, entryPoint: Address = ep07) => hashes(await store.listByEntity(entryPoint, address));

      it("lists the operations in the pool that name the address as factory or paymaster, oldest first, on one EntryPoint", async () => {
        const [late, early, , onV06] = await added(
          { sender: 1, sponsored: true, receivedAt: t0 + 1 },
          { sender: 2, sponsored: true, receivedAt: t0 },
          { sender: 3 },
          { sender: 4, version: "0.6" },
        );
        expect(await naming(fixturePaymaster)).toEqual(hashes([early!, late!]));
        expect(await naming(fixtureFactory.toLowerCase() as Address)).toEqual(hashes([early!, late!]));
        expect(await naming(fixturePaymaster, ep06)).toEqual([onV06!.userOpHash]);
        expect(await naming(fixtureAccount(3).address)).toEqual([]);
      });

      it("lets go of operations once included, failed or dropped, and takes back those a reorg returns", async () => {
        const [first, second] = await added({ sender: 1, sponsored: true }, { sender: 2, sponsored: true, receivedAt: t0 + 1 });
        await store.markIncluded(first!.userOpHash, { transactionHash: txHash, blockHash, blockNumber: 1n }, t0 + 3_000);
        await store.drop([second!.userOpHash], "AA33 reverted", t0 + 3_000);
        expect(await naming(fixturePaymaster)).toEqual([]);
        await store.requeue([first!.userOpHash], t0 + 4_000);
        expect(await naming(fixturePaymaster)).toEqual([first!.userOpHash]);
      });
    });

    describe("admit", () => {
      /** The shipped policies' admission rules (replacement bump, SAME_SENDER_MEMPOOL_COUNT 4) as `admit`'s decision. */
      const byPolicy = (entry: NewMempoolEntry, on: MempoolStore = store) =>
        on.admit(entry, (senderOperations) => erc7562Admission()({ entry, senderOperations, senderStaked: false }));
      /** How many of `attempts` were admitted, and the errors of the others. */
      async function race(attempts: Promise<unknown>[]) {
        const settled = await Promise.allSettled(attempts);
        return {
          admitted: settled.filter((s) => s.status === "fulfilled").length,
          refusals: settled.flatMap((s) => (s.status === "rejected" ? [s.reason] : [])),
        };
      }

      /** A domain error with what it answers on the wire (`toRpcError`): its name, code, message and data. */
      function answer(error: unknown) {
        expect(error).toBeInstanceOf(BundlerError);
        const { code, message, data } = toRpcError(error as DomainError);
        return { name: (error as Error).name, code, message, data };
      }

      it("hands decide the sender's operations in the pool on the entry's EntryPoint, by nonce, and stores the entry pending", async () => {
        const [n2, n1] = await added({ sender: 1, nonce: 2n }, { sender: 1, nonce: 1n }, { sender: 2 }, { sender: 1, version: "0.8" });
        const entry = await fixtureEntry({ sender: 1, nonce: 3n, receivedAt: t0 + 10 });
        const seen: Hash[][] = [];
        const admission = await store.admit(entry, (senderOperations) => {
          seen.push(hashes(senderOperations));
          return { replaces: undefined };
        });
        expect(admission).toEqual({ replaces: undefined });
        expect(seen).toEqual([hashes([n1!, n2!])]);
        expect(await store.get(entry.userOpHash)).toStrictEqual({ ...entry, status: "pending", updatedAt: entry.receivedAt });
      });

      it("swaps a pending operation for its replacement in one step", async () => {
        const [old] = await added({ sender: 1, nonce: 3n });
        const replacement = await fixtureEntry({
          sender: 1,
          nonce: 3n,
          feeBump: 10n ** 9n,
          receivedAt: t0 + 10,
        });
        const { replaces } = await store.admit(replacement, ([pooled]) => ({ replaces: pooled }));
        expect(replaces?.userOpHash).toBe(old!.userOpHash);
        expect(await store.get(replacement.userOpHash)).toStrictEqual({
          ...replacement,
          status: "pending",
          updatedAt: replacement.receivedAt,
        });
        expect(await store.get(old!.userOpHash)).toMatchObject({
          status: "dropped",
          failureReason: `replaced by ${replacement.userOpHash}`,
          updatedAt: replacement.receivedAt,
        });
        expect(hashes(await store.listBySender(ep07, fixtureAccount(1).address))).toEqual([replacement.userOpHash]);
        expect(await store.countByStatus()).toMatchObject({ pending: 1, dropped: 1, failed: 0 });
      });

      it("changes nothing when decide refuses, and throws what it threw", async () => {
        const [old] = await added({ sender: 1 });
        const refusal = new MempoolRejectionError("no");
        const entry = await fixtureEntry({ sender: 1, nonce: 1n });
        await expect(store.admit(entry, () => {
          throw refusal;
        })).rejects.toBe(refusal);
        expect(await store.get(entry.userOpHash)).toBeUndefined();
        expect(await statusOf(old!.userOpHash)).toBe("pending");
      });

      it("refuses to replace an operation claimed for a bundle meanwhile (-32602), changing nothing", async () => {
        const [old] = await added({ sender: 1 });
        const [before] = await store.listBySender(ep07, fixtureAccount(1).address);
        await claim();
        const replacement = await fixtureEntry({ sender: 1, feeBump: 10n ** 9n, receivedAt: t0 + 10 });
        const refused = await store.admit(replacement, () => ({ replaces: before })).catch((error: unknown) => error);
        expect(answer(refused)).toMatchObject({
          name: "MempoolRejectionError",
          code: -32602,
          message: "the operation it would replace is already being bundled",
          data: { replacing: old!.userOpHash },
        });
        expect(await store.get(replacement.userOpHash)).toBeUndefined();
        expect(await statusOf(old!.userOpHash)).toBe("bundling");
      });

      it("refuses a replacement whose hash is known, changing nothing", async () => {
        const [old, other] = await added({ sender: 1 }, { sender: 2 });
        await expect(store.admit(other!, () => ({ replaces: { ...old!, status: "pending", updatedAt: t0 } }))).rejects.toBeInstanceOf(
          DuplicateUserOperationError,
        );
        expect(await statusOf(old!.userOpHash)).toBe("pending");
        expect(await store.countByStatus()).toMatchObject({ pending: 2, dropped: 0 });
      });

      it("refuses a hash known in the pool or included with DuplicateUserOperationError, before deciding", async () => {
        const [bundling, submitted, included, pending] = await added(
          { sender: 1 },
          { sender: 2 },
          { sender: 3 },
          { sender: 4, receivedAt: t0 + 5_000 },
        );
        await claim({ limit: 3 });
        await store.markSubmitted(hashes([submitted!, included!]), txHash, t0 + 2_000);
        await store.markIncluded(included!.userOpHash, { transactionHash: txHash, blockHash, blockNumber: 1n }, t0 + 3_000);
        const before = await Promise.all(hashes([bundling!, submitted!, included!, pending!]).map((hash) => store.get(hash)));
        for (const entry of [bundling!, submitted!, included!, pending!]) {
          await expect(store.admit({ ...entry, receivedAt: t0 + 9_000 }, () => {
            throw new Error("decided on a known hash");
          })).rejects.toBeInstanceOf(DuplicateUserOperationError);
        }
        expect(await Promise.all(hashes([bundling!, submitted!, included!, pending!]).map((hash) => store.get(hash)))).toStrictEqual(before);
      });

      it("takes a dropped or failed operation (never on chain) again, as a fresh pending entry", async () => {
        const [dropped, failed] = await added({ sender: 1, sponsored: true }, { sender: 2 });
        await store.drop([dropped!.userOpHash], "cleared", t0 + 1_000);
        await claim({ now: t0 + 1_000 });
        await store.markSubmitted([failed!.userOpHash], txHash, t0 + 2_000);
        await store.markFailed([failed!.userOpHash], "bundle transaction reverted", t0 + 3_000);
        const again = [
          { ...dropped!, receivedAt: t0 + 5_000, paymasterContextSize: 7 },
          { ...failed!, receivedAt: t0 + 5_001, validation: { codeHashes: {}, storageContracts: [] } },
        ];
        for (const entry of again) expect(await store.admit(entry, replacingNothing)).toEqual({ replaces: undefined });
        for (const entry of again) {
          expect(await store.get(entry.userOpHash)).toStrictEqual({ ...entry, status: "pending", updatedAt: entry.receivedAt });
        }
        expect(await store.countByStatus()).toMatchObject({ pending: 2, dropped: 0, failed: 0 });
        expect(hashes(await store.listByEntity(ep07, fixturePaymaster))).toEqual([dropped!.userOpHash]);
        expect(hashes(await claim({ claimant: "engine-b", now: t0 + 6_000 }))).toEqual(hashes(again));
        await expect(store.admit(again[0]!, replacingNothing)).rejects.toBeInstanceOf(DuplicateUserOperationError);
      });

      it("admits one of many concurrent operations with one sender and nonce and equal fees", async () => {
        const entries = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((variant) => fixtureEntry({ sender: 1, variant })));
        const { admitted, refusals } = await race(entries.map((entry) => byPolicy(entry)));
        expect(admitted).toBe(1);
        for (const refusal of refusals) {
          expect(answer(refusal)).toMatchObject({ code: -32602, message: expect.stringMatching(/^replacement underpriced/) });
        }
        expect(await store.listBySender(ep07, fixtureAccount(1).address)).toHaveLength(1);
        expect(await store.countByStatus()).toMatchObject({ pending: 1, dropped: 0 });
      });

      it("holds the per-sender limit against concurrent operations of one sender", async () => {
        const entries = await Promise.all([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n].map((nonce) => fixtureEntry({ sender: 1, nonce })));
        const { admitted, refusals } = await race(entries.map((entry) => byPolicy(entry)));
        expect(admitted).toBe(4);
        for (const refusal of refusals) expect(answer(refusal)).toMatchObject({ name: "SenderLimitError", code: -32504 });
        expect(await store.listBySender(ep07, fixtureAccount(1).address)).toHaveLength(4);
      });

      it("leaves one live operation per nonce when concurrent replacements raise the fees", async () => {
        // Each step of 10 gwei raises both fees by more than 10%.
        const entries = await Promise.all([0n, 1n, 2n, 3n, 4n, 5n].map((step) => fixtureEntry({ sender: 1, feeBump: step * 10n ** 10n })));
        const { admitted } = await race(entries.map((entry) => byPolicy(entry)));
        const live = await store.listBySender(ep07, fixtureAccount(1).address);
        expect(live).toHaveLength(1);
        expect(await store.countByStatus()).toMatchObject({ pending: 1, dropped: admitted - 1 });
      });

      it("admits one of many operations with one sender and nonce racing through two stores on one database", async ({ skip }) => {
        if (!underTest.openAnother) return skip("the store does not share a database");
        const other = opened(await underTest.openAnother());
        const sameNonce = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((variant) => fixtureEntry({ sender: 1, variant })));
        const overLimit = await Promise.all([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n].map((nonce) => fixtureEntry({ sender: 2, nonce })));
        const { admitted } = await race([...sameNonce, ...overLimit].map((entry, i) => byPolicy(entry, i % 2 ? other : store)));
        expect(admitted).toBe(1 + 4);
        expect(await store.listBySender(ep07, fixtureAccount(1).address)).toHaveLength(1);
        expect(await store.listBySender(ep07, fixtureAccount(2).address)).toHaveLength(4);
      });
    });

    describe("list and countByStatus", () => {
      it("lists one status oldest first, by EntryPoint, up to a limit", async () => {
        const [a, b, c, d] = await added(
          { sender: 1, receivedAt: t0 + 30 },
          { sender: 2, receivedAt: t0 + 10 },
          { sender: 3, receivedAt: t0 + 20, version: "0.8" },
          { sender: 4, receivedAt: t0 + 40 },
        );
        expect(hashes(await store.list("pending"))).toEqual(hashes([b!, c!, a!, d!]));
        expect(hashes(await store.list("pending", { entryPoint: ep07 }))).toEqual(
          hashes([b!, a!, d!]),
        );
        expect(hashes(await store.list("pending", { entryPoint: ep08 }))).toEqual(hashes([c!]));
        expect(hashes(await store.list("pending", { limit: 2 }))).toEqual(hashes([b!, c!]));
        expect(hashes(await store.list("pending", { entryPoint: ep07, limit: 1 }))).toEqual(
          hashes([b!]),
        );
        expect(hashes(await store.list("pending", { entryPoint: ep08, limit: 1 }))).toEqual(hashes([c!]));
        expect(await store.list("bundling")).toEqual([]);
      });

      it("lists a final status oldest first, by EntryPoint, up to a limit", async () => {
        const [a, b, c, d] = hashes(
          await added(
            { sender: 1, receivedAt: t0 + 30 },
            { sender: 2, receivedAt: t0 + 10 },
            { sender: 3, receivedAt: t0 + 20, version: "0.8" },
            { sender: 4, receivedAt: t0 + 40 },
          ),
        );
        await store.drop([a!, c!, b!], "AA25 invalid account nonce", t0 + 1_000);
        await store.markFailed([d!], "bundle transaction reverted", t0 + 2_000);
        expect(hashes(await store.list("dropped"))).toEqual([b, c, a]);
        expect(hashes(await store.list("dropped", { entryPoint: ep07 }))).toEqual([b, a]);
        expect(hashes(await store.list("dropped", { limit: 2 }))).toEqual([b, c]);
        expect(hashes(await store.list("dropped", { entryPoint: ep08, limit: 1 }))).toEqual([c]);
        expect(hashes(await store.list("failed"))).toEqual([d]);
        expect(await store.list("pending")).toEqual([]);
        expect(await store.list("included")).toEqual([]);
      });

      it("counts every status, zeros included", async () => {
        expect(await store.countByStatus()).toStrictEqual({
          pending: 0,
          bundling: 0,
          submitted: 0,
          included: 0,
          failed: 0,
          dropped: 0,
        });
        const entries = await added(
          { sender: 1, receivedAt: t0 + 1 },
          { sender: 2, receivedAt: t0 + 2 },
          { sender: 3, receivedAt: t0 + 3 },
          { sender: 4, receivedAt: t0 + 4 },
          { sender: 5, receivedAt: t0 + 5 },
          { sender: 6, receivedAt: t0 + 6 },
        );
        const [a, b, c, , , f] = hashes(entries);
        await claim({ limit: 4 });
        await store.markSubmitted([a!, b!, c!], txHash, t0 + 2_000);
        await store.markIncluded(
          a!,
          { transactionHash: txHash, blockHash, blockNumber: 7n },
          t0 + 3_000,
        );
        await store.markFailed([b!], "bundle transaction reverted", t0 + 3_000);
        await store.drop([f!], "AA25 invalid account nonce", t0 + 3_000);
        expect(await store.countByStatus()).toStrictEqual({
          pending: 1,
          bundling: 1,
          submitted: 1,
          included: 1,
          failed: 1,
          dropped: 1,
        });
      });
    });

    describe("claimForBundle", () => {
      it("claims oldest first and moves the operations to bundling", async () => {
        const [a, b, c] = await added(
          { sender: 1, receivedAt: t0 + 300 },
          { sender: 2, receivedAt: t0 + 100 },
          { sender: 3, receivedAt: t0 + 200 },
        );
        const claimed = await claim({ now: t0 + 1_000 });
        expect(hashes(claimed)).toEqual(hashes([b!, c!, a!]));
        for (const entry of claimed)
          expect(entry).toMatchObject({ status: "bundling", updatedAt: t0 + 1_000 });
        expect(await store.get(a!.userOpHash)).toMatchObject({
          status: "bundling",
          updatedAt: t0 + 1_000,
        });
      });

      it("claims at most `limit` operations", async () => {
        const entries = await added(
          ...[1, 2, 3, 4, 5].map((sender) => ({ sender, receivedAt: t0 + sender })),
        );
        expect(await claim({ limit: 0 })).toEqual([]);
        expect(hashes(await claim({ limit: 2 }))).toEqual(hashes(entries.slice(0, 2)));
        expect(hashes(await claim({ limit: 2, claimant: "engine-b" }))).toEqual(
          hashes(entries.slice(2, 4)),
        );
      });

      it("claims only operations of the given EntryPoint", async () => {
        const [on07, on08] = await added({ sender: 1 }, { sender: 2, version: "0.8" });
        expect(hashes(await claim({ entryPoint: ep08 }))).toEqual(hashes([on08!]));
        expect(hashes(await claim({ entryPoint: ep07 }))).toEqual(hashes([on07!]));
      });

      it("claims at most one operation per sender: its lowest nonce", async () => {
        // Numeric, not lexical, order: 9 < 16 < 2^64.
        const [, lowest, other] = await added(
          { sender: 1, nonce: 16n, receivedAt: t0 + 1 },
          { sender: 1, nonce: 9n, receivedAt: t0 + 2 },
          { sender: 2, nonce: 0n, receivedAt: t0 + 3 },
          { sender: 1, nonce: 2n ** 64n, receivedAt: t0 + 4 },
        );
        expect(hashes(await claim())).toEqual(hashes([lowest!, other!]));
      });

      it("claims up to `perSender` operations of one sender, its lowest nonces", async () => {
        const [keyOne, keyZero, other, last] = await added(
          { sender: 1, nonce: 2n ** 64n, receivedAt: t0 + 1 },
          { sender: 1, nonce: 5n, receivedAt: t0 + 2 },
          { sender: 2, nonce: 0n, receivedAt: t0 + 3 },
          { sender: 1, nonce: 2n ** 65n, receivedAt: t0 + 4 },
        );
        expect(hashes(await claim({ perSender: 2 }))).toEqual(hashes([keyOne!, keyZero!, other!]));
        await store.requeue(hashes([keyOne!, keyZero!, other!]), t0 + 2_000);
        expect(hashes(await claim({ perSender: 3, now: t0 + 3_000 }))).toEqual(hashes([keyOne!, keyZero!, other!, last!]));
      });

      it("skips senders with an operation bundling or submitted", async () => {
        const [first, second, other] = await added(
          { sender: 1, nonce: 0n, receivedAt: t0 + 1 },
          { sender: 1, nonce: 1n, receivedAt: t0 + 2 },
          { sender: 2, nonce: 0n, receivedAt: t0 + 3 },
        );
        expect(hashes(await claim({ limit: 1 }))).toEqual(hashes([first!]));
        expect(hashes(await claim({ claimant: "engine-b" }))).toEqual(hashes([other!]));
        await store.markSubmitted([first!.userOpHash], txHash, t0 + 2_000);
        expect(await claim({ claimant: "engine-b", now: t0 + 3_000 })).toEqual([]);
        const inclusion = { transactionHash: txHash, blockHash, blockNumber: 9n };
        await store.markIncluded(first!.userOpHash, inclusion, t0 + 4_000);
        expect(hashes(await claim({ claimant: "engine-b", now: t0 + 5_000 }))).toEqual(
          hashes([second!]),
        );
      });

      it("does not claim an operation under an unexpired claim, for anyone", async () => {
        await added({ sender: 1 });
        await claim({ claimant: "engine-a", now: t0, leaseMs: 30_000 });
        expect(await claim({ claimant: "engine-b", now: t0 + 29_999 })).toEqual([]);
        expect(await claim({ claimant: "engine-a", now: t0 + 29_999 })).toEqual([]);
      });

      it("lets an expired claim be claimed again, by another claimant too", async () => {
        const [entry] = await added({ sender: 1 });
        await claim({ claimant: "engine-a", now: t0, leaseMs: 1_000 });
        const reclaimed = await claim({ claimant: "engine-b", now: t0 + 1_000, leaseMs: 1_000 });
        expect(reclaimed).toMatchObject([
          { userOpHash: entry!.userOpHash, status: "bundling", updatedAt: t0 + 1_000 },
        ]);
        expect(await claim({ claimant: "engine-a", now: t0 + 1_500 })).toEqual([]);
        expect(hashes(await claim({ claimant: "engine-a", now: t0 + 2_000 }))).toEqual(
          hashes([entry!]),
        );
      });

      /** 12 senders with nonces 0 and 1: claims may take only the 12 nonce-0 operations. */
      async function expectDisjointConcurrentClaims(stores: MempoolStore[]) {
        const entries = await added(
          ...Array.from({ length: 12 }, (_, i) => [
            { sender: i, nonce: 0n, receivedAt: t0 + i },
            { sender: i, nonce: 1n, receivedAt: t0 + i },
          ]).flat(),
        );
        const claims = await Promise.all(
          ["engine-a", "engine-b", "engine-c", "engine-d"].map((claimant, i) =>
            claim({ claimant, limit: 4 }, stores[i % stores.length]),
          ),
        );
        const claimed = hashes(claims.flat());
        expect(new Set(claimed).size).toBe(claimed.length);
        const firstNonces = hashes(entries.filter((e) => e.userOperation.nonce === 0n));
        expect(claimed.toSorted()).toEqual(firstNonces.toSorted());
      }

      it("never gives concurrent claimants the same operation, and together they take all", async () => {
        await expectDisjointConcurrentClaims([store]);
      });

      it("never gives two store instances on one database the same operation", async ({ skip }) => {
        if (!underTest.openAnother) return skip("the store does not share a database");
        await expectDisjointConcurrentClaims([store, opened(await underTest.openAnother())]);
      });
    });

    describe("releaseClaims", () => {
      it("puts back in the pool, lease or not, what a claimant claimed and never sent; others' claims and sent operations stay", async () => {
        const [mine, sent, theirs] = await added(
          { sender: 1, receivedAt: t0 + 1 },
          { sender: 2, receivedAt: t0 + 2 },
          { sender: 3, receivedAt: t0 + 3 },
        );
        await claim({ limit: 2 });
        await store.markSubmitted([sent!.userOpHash], txHash, t0 + 1_100);
        await claim({ claimant: "engine-b" });
        expect(await store.releaseClaims("engine-a", t0 + 2_000)).toEqual([mine!.userOpHash]);
        expect(await store.get(mine!.userOpHash)).toMatchObject({ status: "pending", updatedAt: t0 + 2_000 });
        expect((await store.get(sent!.userOpHash))?.status).toBe("submitted");
        expect((await store.get(theirs!.userOpHash))?.status).toBe("bundling");
        expect(await store.releaseClaims("engine-a", t0 + 2_000)).toEqual([]);
        // Claimable again at once, well within the lease it was claimed with.
        expect(hashes(await claim({ claimant: "engine-c", now: t0 + 2_001 }))).toEqual([mine!.userOpHash]);
      });
    });

    describe("transitions", () => {
      it("markSubmitted records the bundle transaction", async () => {
        const entries = await added(
          { sender: 1, receivedAt: t0 + 1 },
          { sender: 2, receivedAt: t0 + 2 },
        );
        await claim();
        await store.markSubmitted(hashes(entries), txHash, t0 + 2_000);
        for (const entry of entries) {
          expect(await store.get(entry.userOpHash)).toMatchObject({
            status: "submitted",
            transactionHash: txHash,
            updatedAt: t0 + 2_000,
          });
        }
        expect(hashes(await store.list("submitted"))).toEqual(hashes(entries));
        expect(await claim({ now: t0 + 100_000 })).toEqual([]);
      });

      it("markIncluded records where the operation landed, block number as bigint", async () => {
        const [entry] = await added({ sender: 1 });
        await claim();
        await store.markSubmitted([entry!.userOpHash], txHash, t0 + 2_000);
        const inclusion = { transactionHash: txHash, blockHash, blockNumber: 8_123_456n };
        await store.markIncluded(entry!.userOpHash, inclusion, t0 + 14_000);
        expect(await store.get(entry!.userOpHash)).toStrictEqual({
          ...entry,
          status: "included",
          updatedAt: t0 + 14_000,
          transactionHash: txHash,
          inclusion,
        });
      });

      it("markFailed records the reason, whether pending, claimed or submitted", async () => {
        const [pending, claimed, submitted] = await added(
          { sender: 1, receivedAt: t0 + 3 },
          { sender: 2, receivedAt: t0 + 1 },
          { sender: 3, receivedAt: t0 + 2 },
        );
        await claim({ limit: 2 });
        await store.markSubmitted([submitted!.userOpHash], txHash, t0 + 2_000);
        await store.markFailed(
          hashes([pending!, claimed!, submitted!]),
          "AA23 reverted",
          t0 + 3_000,
        );
        for (const entry of [pending!, claimed!, submitted!]) {
          expect(await store.get(entry.userOpHash)).toMatchObject({
            status: "failed",
            failureReason: "AA23 reverted",
            updatedAt: t0 + 3_000,
          });
        }
        expect(await claim({ now: t0 + 100_000 })).toEqual([]);
      });

      it("requeue puts claimed and submitted operations back to pending and claimable", async () => {
        const [claimed, submitted] = await added(
          { sender: 1, receivedAt: t0 + 1 },
          { sender: 2, receivedAt: t0 + 2 },
        );
        await claim({ claimant: "engine-a", leaseMs: 60_000 });
        await store.markSubmitted([submitted!.userOpHash], txHash, t0 + 2_000);
        await store.requeue(hashes([claimed!, submitted!]), t0 + 3_000);
        for (const entry of [claimed!, submitted!]) {
          expect(await store.get(entry.userOpHash)).toStrictEqual({
            ...entry,
            status: "pending",
            updatedAt: t0 + 3_000,
          });
        }
        expect(hashes(await claim({ claimant: "engine-b", now: t0 + 4_000 }))).toEqual(
          hashes([claimed!, submitted!]),
        );
      });

      it("leaves failed operations failed, and an included one included when marked failed", async () => {
        const [failed, included] = await added({ sender: 1 }, { sender: 2 });
        await claim();
        await store.markSubmitted(hashes([failed!, included!]), txHash, t0 + 2_000);
        await store.markFailed([failed!.userOpHash], "bundle transaction reverted", t0 + 3_000);
        const inclusion = { transactionHash: txHash, blockHash, blockNumber: 11n };
        await store.markIncluded(included!.userOpHash, inclusion, t0 + 3_000);
        const before = await Promise.all(hashes([failed!, included!]).map((hash) => store.get(hash)));
        await store.requeue([failed!.userOpHash], t0 + 4_000);
        await store.markSubmitted([failed!.userOpHash], blockHash, t0 + 5_000);
        await store.markFailed([included!.userOpHash], "late", t0 + 6_000);
        const after = await Promise.all(hashes([failed!, included!]).map((hash) => store.get(hash)));
        expect(after).toStrictEqual(before);
      });

      it("takes an included operation back when its block leaves the canonical chain: to submitted, or to pending", async () => {
        const [resent, requeued] = await added({ sender: 1, receivedAt: t0 + 1 }, { sender: 2, receivedAt: t0 + 2 });
        await claim();
        await store.markSubmitted(hashes([resent!, requeued!]), txHash, t0 + 2_000);
        for (const entry of [resent!, requeued!]) {
          await store.markIncluded(entry.userOpHash, { transactionHash: txHash, blockHash, blockNumber: 11n }, t0 + 3_000);
        }
        await store.markSubmitted([resent!.userOpHash], txHash, t0 + 4_000);
        await store.requeue([requeued!.userOpHash], t0 + 4_000);
        expect(await store.get(resent!.userOpHash)).toStrictEqual({ ...resent, status: "submitted", transactionHash: txHash, updatedAt: t0 + 4_000 });
        expect(await store.get(requeued!.userOpHash)).toStrictEqual({ ...requeued, status: "pending", updatedAt: t0 + 4_000 });
        // Back in submitted with no claim: any engine may adopt it to follow it to the chain.
        expect(hashes(await store.adoptSubmitted({ claimant: "engine-b", leaseMs: 1_000, now: t0 + 5_000, limit: 10 }))).toEqual([resent!.userOpHash]);
      });

      it("ignores unknown hashes and empty lists", async () => {
        const unknown = await fixtureEntry();
        await store.markSubmitted([], txHash, t0);
        await store.markSubmitted([unknown.userOpHash], txHash, t0);
        await store.markIncluded(
          unknown.userOpHash,
          { transactionHash: txHash, blockHash, blockNumber: 1n },
          t0,
        );
        await store.markFailed([unknown.userOpHash], "gone", t0);
        await store.drop([unknown.userOpHash], "gone", t0);
        await store.drop([], "gone", t0);
        await store.requeue([], t0);
        expect(await store.get(unknown.userOpHash)).toBeUndefined();
        expect(Object.values(await store.countByStatus())).toEqual([0, 0, 0, 0, 0, 0]);
      });
    });

    describe("following submitted operations: renewClaims and adoptSubmitted", () => {
      /** Operations claimed by engine-a at t0 + 1s (lease 30 s) and submitted. */
      async function submittedBy(...senders: number[]) {
        const entries = await added(...senders.map((sender, i) => ({ sender, receivedAt: t0 + i })));
        await claim();
        await store.markSubmitted(hashes(entries), txHash, t0 + 2_000);
        return entries;
      }
      const adopt = (parameters: { claimant?: string; previousClaimant?: string; now: number; limit?: number }, on: MempoolStore = store) =>
        on.adoptSubmitted({ claimant: "engine-b", leaseMs: 30_000, limit: 10, ...parameters });

      it("leaves submitted operations to their engine while its claim holds, and lets another adopt them once it lapses", async () => {
        const entries = await submittedBy(1, 2);
        expect(await adopt({ now: t0 + 30_000 })).toEqual([]);
        const adopted = await adopt({ now: t0 + 31_000 });
        expect(hashes(adopted)).toEqual(hashes(entries));
        expect(adopted.map((e) => [e.status, e.transactionHash])).toEqual([
          ["submitted", txHash],
          ["submitted", txHash],
        ]);
        // Adopted: now engine-b's, under a fresh claim.
        expect(await adopt({ claimant: "engine-c", now: t0 + 32_000 })).toEqual([]);
      });

      it("renewClaims keeps a lapsing claim alive for its own claimant only", async () => {
        const entries = await submittedBy(1);
        await store.renewClaims(hashes(entries), "engine-x", t0 + 100_000);
        await store.renewClaims(hashes(entries), "engine-a", t0 + 60_000);
        expect(await adopt({ now: t0 + 59_000 })).toEqual([]);
        expect(hashes(await adopt({ now: t0 + 61_000 }))).toEqual(hashes(entries));
      });

      it("adopts at once what the previous claimant holds (the same engine restarted), oldest first, up to a limit", async () => {
        const entries = await submittedBy(1, 2, 3);
        expect(hashes(await adopt({ previousClaimant: "engine-a", now: t0 + 3_000, limit: 2 }))).toEqual(hashes(entries.slice(0, 2)));
        expect(hashes(await adopt({ previousClaimant: "engine-a", now: t0 + 3_000 }))).toEqual(hashes(entries.slice(2)));
      });

      it("adopts only submitted operations", async () => {
        await added({ sender: 1 }, { sender: 2 });
        await claim({ now: t0 });
        expect(await adopt({ previousClaimant: "engine-a", now: t0 + 100_000 })).toEqual([]);
      });

      it("never lets two store instances on one database adopt the same operation", async ({ skip }) => {
        if (!underTest.openAnother) return skip("the store does not share a database");
        const entries = await submittedBy(1, 2, 3, 4, 5, 6);
        const other = opened(await underTest.openAnother());
        const [a, b] = await Promise.all([
          adopt({ claimant: "engine-b", now: t0 + 40_000, limit: 4 }),
          adopt({ claimant: "engine-c", now: t0 + 40_000, limit: 4 }, other),
        ]);
        expect([...hashes(a), ...hashes(b)].sort()).toEqual(hashes(entries).sort());
      });
    });

    describe("drop, expire and clear", () => {
      /** One operation in each status, received in this order (pending last, so expiry can split). */
      async function oneOfEach() {
        const [bundling, submitted, included, failed, dropped, pending] = await added(
          ...[1, 2, 3, 4, 5].map((sender) => ({ sender, receivedAt: t0 + sender })),
          { sender: 6, receivedAt: t0 + 600 },
        );
        await claim({ limit: 5 });
        await store.markSubmitted(hashes([submitted!, included!, failed!]), txHash, t0 + 1_000);
        await store.markIncluded(
          included!.userOpHash,
          { transactionHash: txHash, blockHash, blockNumber: 3n },
          t0 + 1_000,
        );
        await store.markFailed([failed!.userOpHash], "bundle transaction reverted", t0 + 1_000);
        await store.drop([dropped!.userOpHash], "AA23 reverted", t0 + 1_000);
        return {
          bundling: bundling!,
          submitted: submitted!,
          included: included!,
          failed: failed!,
          dropped: dropped!,
          pending: pending!,
        };
      }

      it("drop removes pending and claimed operations with a reason, and nothing sent or final", async () => {
        const ops = await oneOfEach();
        const before = await Promise.all(
          hashes([ops.submitted, ops.included, ops.failed, ops.dropped]).map((h) => store.get(h)),
        );
        await store.drop(hashes(Object.values(ops)), "AA25 invalid account nonce", t0 + 2_000);
        for (const entry of [ops.pending, ops.bundling]) {
          expect(await store.get(entry.userOpHash)).toMatchObject({
            status: "dropped",
            failureReason: "AA25 invalid account nonce",
            updatedAt: t0 + 2_000,
          });
        }
        const after = await Promise.all(
          hashes([ops.submitted, ops.included, ops.failed, ops.dropped]).map((h) => store.get(h)),
        );
        expect(after).toStrictEqual(before);
        expect(await claim({ now: t0 + 100_000 })).toEqual([]);
        expect(await store.listBySender(ep07, fixtureAccount(6).address)).toEqual([]);
      });

      it("expire drops pending operations received before the cutoff, oldest first, and says which", async () => {
        const [late, early, middle] = await added(
          { sender: 1, receivedAt: t0 + 300 },
          { sender: 2, receivedAt: t0 + 100 },
          { sender: 3, receivedAt: t0 + 200 },
        );
        expect(await store.expire(t0 + 100, t0 + 5_000)).toEqual([]);
        expect(await store.expire(t0 + 300, t0 + 5_000)).toEqual(hashes([early!, middle!]));
        expect(await store.get(early!.userOpHash)).toMatchObject({
          status: "dropped",
          failureReason: "expired",
          updatedAt: t0 + 5_000,
        });
        expect(await statusOf(late!.userOpHash)).toBe("pending");
        expect(await store.expire(t0 + 300, t0 + 6_000)).toEqual([]);
      });

      it("expire leaves claimed, sent and final operations alone", async () => {
        const ops = await oneOfEach();
        expect(await store.expire(t0 + 10_000, t0 + 10_000)).toEqual([ops.pending.userOpHash]);
        expect(await statusOf(ops.bundling.userOpHash)).toBe("bundling");
        expect(await statusOf(ops.submitted.userOpHash)).toBe("submitted");
        expect(await store.countByStatus()).toMatchObject({ dropped: 2, included: 1, failed: 1 });
      });

      it("clear drops every operation not yet sent, oldest first, and leaves sent ones tracked", async () => {
        const ops = await oneOfEach();
        expect(await store.clear({ now: t0 + 9_000 })).toEqual(hashes([ops.bundling, ops.pending]));
        expect(await store.get(ops.pending.userOpHash)).toMatchObject({
          status: "dropped",
          failureReason: "cleared",
          updatedAt: t0 + 9_000,
        });
        expect(await store.countByStatus()).toStrictEqual({
          pending: 0,
          bundling: 0,
          submitted: 1,
          included: 1,
          failed: 1,
          dropped: 3,
        });
        expect(await store.clear({ now: t0 + 9_500 })).toEqual([]);
      });

      it("clear on one EntryPoint leaves the others' operations", async () => {
        const [on07, on08] = await added({ sender: 1 }, { sender: 2, version: "0.8" });
        expect(
          await store.clear({ entryPoint: ep08.toLowerCase() as Address, now: t0 + 1 }),
        ).toEqual(hashes([on08!]));
        expect(await statusOf(on07!.userOpHash)).toBe("pending");
      });
    });

    it("keeps every operation and its state across close and reopen", async ({ skip }) => {
      if (!underTest.reopen) return skip("the store does not persist");
      const entries = await added(
        { sender: 1, version: "0.6", receivedAt: t0 + 1 },
        { sender: 2, version: "0.7", sponsored: true, receivedAt: t0 + 2 },
        { sender: 3, version: "0.8", eip7702: true, receivedAt: t0 + 3 },
      );
      await claim({ entryPoint: ep06 });
      await store.markSubmitted([entries[0]!.userOpHash], txHash, t0 + 2_000);
      await claim({ entryPoint: ep07, leaseMs: 60_000 });
      const before: (MempoolEntry | undefined)[] = await Promise.all(
        hashes(entries).map((hash) => store.get(hash)),
      );

      await close(store);
      store = opened(await underTest.reopen());
      const after = await Promise.all(hashes(entries).map((hash) => store.get(hash)));
      expect(after).toStrictEqual(before);
      // The claim survived too: only the v0.8 operation is free.
      const now = t0 + 3_000;
      expect(await claim({ entryPoint: ep06, claimant: "engine-b", now })).toEqual([]);
      expect(await claim({ entryPoint: ep07, claimant: "engine-b", now })).toEqual([]);
      expect(hashes(await claim({ entryPoint: ep08, claimant: "engine-b", now }))).toEqual(
        hashes([entries[2]!]),
      );
    });
  });
}
