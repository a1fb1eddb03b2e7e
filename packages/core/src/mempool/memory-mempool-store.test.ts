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
