import { randomUUID } from "node:crypto";
import { Effect, Layer, Logger, References } from "effect";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { effectLogger } from "../src/logger.ts";
import { EngineLoggerService, MempoolStoreService, ReputationStoreService } from "../src/ports.ts";
import { memoryStores, postgresStores } from "../src/stores.ts";

/** The store layers and the logger bridge, each on its own. */
describe("@bundlekit/effect layers", () => {
  const connectionString = inject("postgresUrl");
  const schema = `bundlekit_effect_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Pool({ connectionString, max: 1 });
  beforeAll(() => admin.query(`create schema ${schema}`));
  afterAll(async () => {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });

  const counts = Effect.gen(function* () {
    const store = yield* MempoolStoreService;
    const reputation = yield* ReputationStoreService;
    return { store, pending: (yield* Effect.promise(() => store.countByStatus())).pending, entities: (yield* Effect.promise(() => reputation.list("0x0000000071727De22E5E9d8BAf0edAc6f37da032"))).length };
  });

  it("memoryStores: an empty mempool and reputation for each program that builds it", async () => {
    const first = await Effect.runPromise(counts.pipe(Effect.provide(memoryStores)));
    const second = await Effect.runPromise(counts.pipe(Effect.provide(memoryStores)));
    expect(first).toMatchObject({ pending: 0, entities: 0 });
    expect(second.store).not.toBe(first.store);
  });

  it("postgresStores: opened on the database with the scope, closed on release", async () => {
    const url = new URL(connectionString);
    url.searchParams.set("options", `-c search_path=${schema}`);
    const { store, pending, entities } = await Effect.runPromise(counts.pipe(Effect.provide(postgresStores(url.toString()))));
    expect({ pending, entities }).toEqual({ pending: 0, entities: 0 });
    const tables = await admin.query("select count(*)::int as n from information_schema.tables where table_schema = $1", [schema]);
    expect(tables.rows[0].n).toBeGreaterThan(0);
    await expect(store.countByStatus()).rejects.toThrow();
  });

  it("effectLogger: the engine's lines go through the program's Logger, with their fields as annotations, at its minimum level", async () => {
    const lines: { level: string; message: unknown; annotations: Record<string, unknown> }[] = [];
    const capture = Logger.make(({ logLevel, message, fiber }) => {
      lines.push({ level: logLevel, message, annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } });
    });
    const program = Effect.gen(function* () {
      const logger = yield* EngineLoggerService;
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
