import { describe, expect, it } from "vitest";
import { fixtureEntry, mempoolStoreContract, replacingNothing } from "../../../testing/src/index.ts";
import { createMemoryMempoolStore } from "./memory-mempool-store.ts";

mempoolStoreContract("memory", async () => ({ store: createMemoryMempoolStore() }));

describe("the memory store's keepFinal", () => {
  it("forgets the oldest final operations beyond keepFinal and keeps every operation still in the pool", async () => {
    const store = createMemoryMempoolStore({ keepFinal: 2 });
    const entries = await Promise.all(
      [0, 1, 2, 3, 4].map((sender) => fixtureEntry({ sender, receivedAt: 1_000 + sender })),
    );
    for (const entry of entries) await store.admit(entry, replacingNothing);
    const [a, b, c, d, e] = entries.map((entry) => entry.userOpHash);
    await store.drop([a!], "first", 2_000);
    await store.markFailed([b!], "second", 2_001);
    await store.drop([c!], "third", 2_002);

    expect(await store.get(a!)).toBeUndefined();
    expect((await store.get(b!))?.failureReason).toBe("second");
    expect((await store.get(c!))?.failureReason).toBe("third");
    expect(await store.countByStatus()).toMatchObject({ pending: 2, failed: 1, dropped: 1 });
    for (const hash of [d!, e!]) expect((await store.get(hash))?.status).toBe("pending");
  });

  it("forgets by the last time an operation became final: one sent again after a drop is as young as its second drop", async () => {
    const store = createMemoryMempoolStore({ keepFinal: 2 });
    const [a, b, c] = await Promise.all([0, 1, 2].map((sender) => fixtureEntry({ sender, receivedAt: 1_000 + sender })));
    for (const entry of [a!, b!, c!]) await store.admit(entry, replacingNothing);
    await store.drop([a!.userOpHash], "first drop", 2_000);
    await store.admit({ ...a!, receivedAt: 2_001 }, replacingNothing);
    await store.drop([b!.userOpHash], "b", 2_002);
    await store.drop([c!.userOpHash], "c", 2_003);
    await store.drop([a!.userOpHash], "second drop", 2_004);

    expect(await store.get(b!.userOpHash)).toBeUndefined();
    expect((await store.get(c!.userOpHash))?.failureReason).toBe("c");
    expect((await store.get(a!.userOpHash))?.failureReason).toBe("second drop");
  });

  it("keeps forgetting in order over many operations", async () => {
    const store = createMemoryMempoolStore({ keepFinal: 10 });
    const entries = await Promise.all(Array.from({ length: 3_000 }, (_, sender) => fixtureEntry({ sender, receivedAt: 1_000 + sender })));
    for (const entry of entries) {
      await store.admit(entry, replacingNothing);
      await store.drop([entry.userOpHash], "gone", 5_000);
    }
    const kept = await Promise.all(entries.map((entry) => store.get(entry.userOpHash)));
    expect(kept.map((entry, i) => (entry ? i : -1)).filter((i) => i >= 0)).toEqual(Array.from({ length: 10 }, (_, i) => 2_990 + i));
  });

  it("refuses a keepFinal that is not a whole number", () => {
    expect(() => createMemoryMempoolStore({ keepFinal: -1 })).toThrow(
      /keepFinal must be a whole number/,
    );
  });
});

describe("the memory store's copies", () => {
  it("keeps what it was given, whatever the caller later does to the entry it passed or the ones it read", async () => {
    const store = createMemoryMempoolStore();
    const entry = await fixtureEntry({ sender: 1, receivedAt: 1_000 });
    entry.validation = {
      codeHashes: { [entry.userOperation.sender]: "0x01" },
      storageContracts: [entry.userOperation.sender],
    };
    await store.admit(entry, replacingNothing);
    const stored = await store.get(entry.userOpHash);

    entry.userOperation.callGasLimit = 1n;
    entry.validation.storageContracts.push(entry.entryPoint);
    const read = (await store.get(entry.userOpHash))!;
    read.userOperation.nonce = 99n;
    read.validation!.codeHashes[entry.userOperation.sender] = "0x02";

    expect(await store.get(entry.userOpHash)).toEqual(stored);
    expect(stored?.validation).toEqual({
      codeHashes: { [entry.userOperation.sender]: "0x01" },
      storageContracts: [entry.userOperation.sender],
    });
  });
});
