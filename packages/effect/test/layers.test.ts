import { Effect, Layer, Logger, References } from "effect";
import { describe, expect, it } from "vitest";
import { effectLogger } from "../src/logger.ts";
import { EngineLogger, MempoolStorage, ReputationStorage } from "../src/ports.ts";
import { memoryStores } from "../src/stores.ts";

/** The memory store layer and the logger bridge, each on its own (the SQL store layers: storage-kysely's effect-stores.test.ts). */
describe("@bundlekit/effect layers", () => {
  const counts = Effect.gen(function* () {
    const store = yield* MempoolStorage;
    const reputation = yield* ReputationStorage;
    return { store, pending: (yield* Effect.promise(() => store.countByStatus())).pending, entities: (yield* Effect.promise(() => reputation.list("0x0000000071727De22E5E9d8BAf0edAc6f37da032"))).length };
  });

  it("memoryStores: an empty mempool and reputation for each program that builds it", async () => {
    const first = await Effect.runPromise(counts.pipe(Effect.provide(memoryStores)));
    const second = await Effect.runPromise(counts.pipe(Effect.provide(memoryStores)));
    expect(first).toMatchObject({ pending: 0, entities: 0 });
    expect(second.store).not.toBe(first.store);
  });

  it("effectLogger: the engine's lines go through the program's Logger, with their fields as annotations, at its minimum level", async () => {
    const lines: { level: string; message: unknown; annotations: Record<string, unknown> }[] = [];
    const capture = Logger.make(({ logLevel, message, fiber }) => {
      lines.push({ level: logLevel, message, annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } });
    });
    const program = Effect.gen(function* () {
      const logger = yield* EngineLogger;
      logger.debug("hidden below the minimum level", {});
      logger.info("bundle submitted", { ops: 3, nonce: 7n });
      logger.error("could not follow a bundle transaction", { transactionHash: "0xabc" });
    });
    const layer = Layer.provideMerge(effectLogger, Logger.layer([capture]));
    await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.provideService(References.MinimumLogLevel, "Info")));
    // The engine's logger is synchronous and Effect's runs on fibers of its own: wait for the lines.
    await expect.poll(() => lines.map((l) => [l.level, l.message])).toEqual([
      ["Info", ["bundle submitted"]],
      ["Error", ["could not follow a bundle transaction"]],
    ]);
    expect(lines[0]!.annotations).toEqual({ ops: 3, nonce: "7" });
  });
});
