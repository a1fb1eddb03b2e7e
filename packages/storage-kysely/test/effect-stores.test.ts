import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { canonicalEntryPoints, type MempoolStore, type ReputationStore } from "@bundlekit/core";
import {
  Bundler,
  Chain,
  effectClock,
  effectLogger,
  MempoolStorage,
  PreconfirmationStorage,
  Relayers,
  ReputationStorage,
} from "@bundlekit/effect";
import { Effect, Layer } from "effect";
import { getAddress, type Hash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFixture, testSigner } from "../../core/test/fixtures.ts";
import { postgresStores, type StoreServices, sqliteStores } from "../src/effect.ts";
import { createPostgresStores, createSqliteStores } from "../src/index.ts";
import { postgresSchemas, sqliteFiles } from "./backends.ts";

/**
 * The SQLite and PostgreSQL store layers of `@bundlekit/storage-kysely/effect`: the documented
 * snippet on new files, typed failures, the scope, and that the engine writes to the stores
 * given: an operation admitted through `Bundler` on a real anvil is pending in the given
 * mempool store, and its factory's `opsSeen` counted in the given reputation store, as read back,
 * once the layer is released, by stores opened anew on the same SQLite file or PostgreSQL schema.
 */
describe("@bundlekit/storage-kysely/effect", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());
  const { newFile } = sqliteFiles("bundlekit-effect");

  it("the documented snippet (docs/effect.md) runs on a new SQLite file, five times in a row, each admitting an operation", async () => {
    for (let run = 0; run < 5; run++) {
      const account = await fx.makeAccount("0.7");
      const filename = newFile();
      // docs/effect.md's snippet, on the devnet's node and keys and a new file; the tracer on
      // this thread, as in every engine test (a pool of tracer threads per engine is slow to start).
      const ports = Layer.mergeAll(
        Layer.succeed(Chain, fx.client),
        Layer.succeed(Relayers, testSigner(fx.devnet.relayerKeys)),
        sqliteStores(filename),
        effectClock,
        effectLogger,
      );
      const bundler = Bundler.layer({
        bundling: { intervalMs: 1_000 },
        validation: { tracerWorkers: 0 },
      }).pipe(Layer.provideMerge(ports));
      const program = Effect.gen(function* () {
        const engine = yield* Bundler;
        const op = yield* Effect.promise(() =>
          fx.makeOperation(engine.engine, account, { to: account.address, value: 1n }),
        );
        return yield* engine.sendUserOperation(op, account.entryPoint.address);
      });
      const hash = await Effect.runPromise(program.pipe(Effect.provide(bundler)));
      const stores = await createSqliteStores({ filename });
      try {
        expect((await stores.mempool.get(hash))?.userOperation.sender).toBe(account.address);
      } finally {
        await stores.close();
      }
    }
  });

  /** The services a program gets from `layer`, used, then whether they still answer once its scope closed. */
  async function provided(layer: Layer.Layer<StoreServices, unknown>) {
    const { mempool, reputation, preconfirmations, pending } = await Effect.runPromise(
      Effect.gen(function* () {
        const mempool = yield* MempoolStorage;
        const reputation = yield* ReputationStorage;
        const preconfirmations = yield* PreconfirmationStorage;
        return {
          mempool,
          reputation,
          preconfirmations,
          pending: (yield* Effect.promise(() => mempool.countByStatus())).pending,
        };
      }).pipe(Effect.provide(layer)),
    );
    const answers = (promise: Promise<unknown>) =>
      promise.then(
        () => true,
        () => false,
      );
    return {
      pending,
      afterRelease: {
        mempool: await answers(mempool.countByStatus()),
        reputation: await answers(reputation.list(canonicalEntryPoints["0.7"])),
        preconfirmations: await answers(preconfirmations.get(`0x${"00".repeat(32)}`)),
      },
    };
  }

  it("sqliteStores: opened with the scope, closed on release", async () => {
    expect(await provided(sqliteStores(newFile()))).toEqual({
      pending: 0,
      afterRelease: { mempool: false, reputation: false, preconfirmations: false },
    });
  });

  /** How a program that needs a store fails when `layer` cannot open it. */
  const openFailure = <E>(layer: Layer.Layer<StoreServices, E>) =>
    Effect.runPromise(
      Effect.flip(
        Effect.provide(
          Effect.gen(function* () {
            return yield* MempoolStorage;
          }),
          layer,
        ),
      ),
    );

  it("sqliteStores: a file that cannot be opened fails the layer with StoreOpenFailed, carrying the cause", async () => {
    const filename = join(newFile(), "missing", "bundler.sqlite");
    const failure = await openFailure(sqliteStores(filename));
    expect(failure).toMatchObject({
      _tag: "StoreOpenFailed",
      database: filename,
      message: `cannot open the stores on ${filename}: Cannot open database because the directory does not exist`,
    });
    expect(failure.cause).toBeInstanceOf(Error);
  });

  it("sqliteStores: a schema that cannot be migrated fails the layer with StoreOpenFailed", async () => {
    const filename = newFile();
    await writeFile(filename, "not a database, but a file of the same name");
    const failure = await openFailure(sqliteStores(filename));
    expect(failure).toMatchObject({
      _tag: "StoreOpenFailed",
      message: `cannot open the stores on ${filename}: file is not a database`,
    });
  });

  it("postgresStores: a server that does not answer fails the layer with StoreOpenFailed, naming it without its password", async () => {
    const failure = await openFailure(
      postgresStores("postgres://bundler:s3cret@127.0.0.1:1/bundler"),
    );
    expect(failure).toMatchObject({
      _tag: "StoreOpenFailed",
      database: "postgres://bundler:***@127.0.0.1:1/bundler",
      message:
        "cannot open the stores on postgres://bundler:***@127.0.0.1:1/bundler: connect ECONNREFUSED 127.0.0.1:1",
    });
  });

  /** Admit one operation of a new SimpleAccount (deployed by its factory) through the engine built on `stores`. */
  async function admitThrough(stores: Layer.Layer<StoreServices, unknown>) {
    const account = await fx.makeAccount("0.7");
    const ports = Layer.mergeAll(
      Layer.succeed(Chain, fx.client),
      Layer.succeed(Relayers, testSigner(fx.devnet.relayerKeys)),
      stores,
    );
    const program = Effect.gen(function* () {
      const bundler = yield* Bundler;
      const op = yield* Effect.promise(() =>
        fx.makeOperation(bundler.engine, account, { to: account.address, value: 1n }),
      );
      return yield* bundler.sendUserOperation(op, account.entryPoint.address);
    });
    const layer = Bundler.layer({
      bundling: { mode: "manual" },
      validation: { tracerWorkers: 0 },
    }).pipe(Layer.provideMerge(ports));
    const hash: Hash = await Effect.runPromise(program.pipe(Effect.provide(layer)));
    const { factory } = await account.getFactoryArgs();
    return {
      hash,
      sender: account.address,
      factory: getAddress(factory!),
      entryPoint: account.entryPoint.address,
    };
  }

  /** What stores reopened on the same database hold of the admitted operation. */
  async function readBack(
    stores: { mempool: MempoolStore; reputation: ReputationStore; close(): Promise<void> },
    admitted: Awaited<ReturnType<typeof admitThrough>>,
  ) {
    try {
      const entry = await stores.mempool.get(admitted.hash);
      return {
        pending: { status: entry?.status, sender: entry?.userOperation.sender },
        reputation: await stores.reputation.list(admitted.entryPoint),
      };
    } finally {
      await stores.close();
    }
  }

  it("sqliteStores: the admitted operation and its factory's opsSeen are in the SQLite file after the layer closed", async () => {
    const filename = newFile();
    const admitted = await admitThrough(sqliteStores(filename));
    expect(await readBack(await createSqliteStores({ filename }), admitted)).toEqual({
      pending: { status: "pending", sender: admitted.sender },
      // The sender is unstaked, so only the factory is counted (ERC-7562).
      reputation: [{ address: admitted.factory, opsSeen: 1, opsIncluded: 0 }],
    });
  });

  describe("postgresStores", () => {
    const { newSchema } = postgresSchemas("bundlekit_effect");

    it("opened on the database with the scope, ended on release", async () => {
      expect(await provided(postgresStores((await newSchema()).url.toString()))).toEqual({
        pending: 0,
        afterRelease: { mempool: false, reputation: false, preconfirmations: false },
      });
    });

    it("the admitted operation and its factory's opsSeen are in the database after the layer closed", async () => {
      const url = (await newSchema()).url.toString();
      const admitted = await admitThrough(postgresStores(url));
      expect(
        await readBack(await createPostgresStores({ connectionString: url }), admitted),
      ).toEqual({
        pending: { status: "pending", sender: admitted.sender },
        reputation: [{ address: admitted.factory, opsSeen: 1, opsIncluded: 0 }],
      });
    });
  });
});
