import { Context, Effect, Exit, Layer, Logger, References, Scope } from "effect";
import { TestClock } from "effect/testing";
import { describe, expect, it } from "vitest";
import { effectClock } from "../src/clock.ts";
import { effectLogger } from "../src/logger.ts";
import { EngineClock, EngineLogger, MempoolStorage, ReputationStorage } from "../src/ports.ts";
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
    // Written in the call, not on fibers of their own: there when the program ends.
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ["Info", ["bundle submitted"]],
      ["Error", ["could not follow a bundle transaction"]],
    ]);
    expect(lines[0]!.annotations).toEqual({ ops: 3, nonce: "7" });
  });

  it("effectClock: timers run in the layer's scope; closing it interrupts those waiting, and one set after it never fires", async () => {
    const fired: string[] = [];
    const program = Effect.gen(function* () {
      const scope = yield* Scope.make();
      const clock = Context.get(yield* Layer.buildWithScope(effectClock, scope), EngineClock);
      clock.setTimeout(() => fired.push("before close"), 1_000);
      const cancelled = clock.setTimeout(() => fired.push("cancelled"), 1_000);
      cancelled.cancel();
      clock.setTimeout(() => fired.push("pending at close"), 5_000);
      yield* TestClock.adjust("2 seconds");
      yield* Scope.close(scope, Exit.void);
      clock.setTimeout(() => fired.push("after close"), 1_000);
      yield* TestClock.adjust("10 seconds");
    });
    await Effect.runPromise(program.pipe(Effect.provide(TestClock.layer())));
    expect(fired).toEqual(["before close"]);
  });

  it("effectLogger: a line logged just before the scope closes is written in the call", async () => {
    const lines: unknown[] = [];
    const capture = Logger.make(({ message }) => void lines.push(message));
    const program = Effect.gen(function* () {
      const scope = yield* Scope.make();
      const logger = Context.get(yield* Layer.buildWithScope(effectLogger, scope), EngineLogger);
      logger.info("stopping", {});
      yield* Scope.close(scope, Exit.void);
    });
    await Effect.runPromise(program.pipe(Effect.provide(Logger.layer([capture]))));
    expect(lines).toEqual([["stopping"]]);
  });
});
