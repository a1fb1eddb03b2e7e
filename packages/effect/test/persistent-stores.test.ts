import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MempoolStore, ReputationStore } from "@bundlekit/core";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import {
  createPostgresMempoolStore,
  createPostgresReputationStore,
  createSqliteMempoolStore,
  createSqliteReputationStore,
} from "@bundlekit/storage-kysely";
import { Effect, Layer } from "effect";
import pg from "pg";
import { getAddress, type Hash } from "viem";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { engineFixture } from "../../core/test/fixtures.ts";
import { BundlerService } from "../src/bundler.ts";
import { ChainClientService, type MempoolStoreService, RelayerSignerService, type ReputationStoreService } from "../src/ports.ts";
import { postgresStores, sqliteStores } from "../src/stores.ts";

/**
 * The stores given to the Effect face are the ones the engine writes: an operation admitted
 * through `BundlerService` on a real anvil is pending in the given mempool store, and its
 * factory's `opsSeen` is counted in the given reputation store, as read back, once the layer is
 * released, by stores opened anew on the same SQLite file or PostgreSQL schema.
 */
describe("@bundlekit/effect with persistent stores", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  /** Admit one operation of a new SimpleAccount (deployed by its factory) through the engine built on `stores`. */
  async function admitThrough(stores: Layer.Layer<MempoolStoreService | ReputationStoreService>) {
    const account = await fx.makeAccount("0.7");
    const ports = Layer.mergeAll(
      Layer.succeed(ChainClientService, fx.client as never),
      Layer.succeed(RelayerSignerService, createLocalKeySigner(fx.devnet.relayerKeys)),
      stores,
    );
    const program = Effect.gen(function* () {
      const bundler = yield* BundlerService;
      const op = yield* Effect.promise(() => fx.makeOperation(bundler.engine, account, { to: account.address, value: 1n }));
      return yield* bundler.sendUserOperation(op, account.entryPoint.address);
    });
    const layer = BundlerService.layer({ bundling: { mode: "manual" } }).pipe(Layer.provideMerge(ports));
    const hash: Hash = await Effect.runPromise(program.pipe(Effect.provide(layer)));
    const { factory } = await account.getFactoryArgs();
    return { hash, sender: account.address, factory: getAddress(factory!), entryPoint: account.entryPoint.address };
  }

  /** What stores reopened on the same database hold of the admitted operation. */
  async function readBack(mempool: MempoolStore, reputation: ReputationStore, admitted: Awaited<ReturnType<typeof admitThrough>>) {
    try {
      const entry = await mempool.get(admitted.hash);
      return {
        pending: { status: entry?.status, sender: entry?.userOperation.sender },
        reputation: await reputation.list(admitted.entryPoint),
      };
    } finally {
      await mempool.close?.();
      await reputation.close?.();
    }
  }

  it("sqliteStores: the admitted operation and its factory's opsSeen are in the SQLite file after the layer closed", async () => {
    const directory = await mkdtemp(join(tmpdir(), "bundlekit-effect-"));
    try {
      const filename = join(directory, "bundler.sqlite");
      const admitted = await admitThrough(sqliteStores(filename));
      const stored = await readBack(
        await createSqliteMempoolStore({ filename }),
        await createSqliteReputationStore({ filename }),
        admitted,
      );
      expect(stored).toEqual({
        pending: { status: "pending", sender: admitted.sender },
        // The sender is unstaked, so only the factory is counted (ERC-7562).
        reputation: [{ address: admitted.factory, opsSeen: 1, opsIncluded: 0 }],
      });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  describe("postgresStores", () => {
    const connectionString = inject("postgresUrl");
    const schema = `bundlekit_effect_persist_${randomUUID().replaceAll("-", "")}`;
    const admin = new pg.Pool({ connectionString, max: 1 });
    const url = new URL(connectionString);
    url.searchParams.set("options", `-c search_path=${schema}`);
    beforeAll(() => admin.query(`create schema ${schema}`));
    afterAll(async () => {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });

    it("the admitted operation and its factory's opsSeen are in the database after the layer closed", async () => {
      const admitted = await admitThrough(postgresStores(url.toString()));
      const stored = await readBack(
        await createPostgresMempoolStore({ connectionString: url.toString() }),
        await createPostgresReputationStore({ connectionString: url.toString() }),
        admitted,
      );
      expect(stored).toEqual({
        pending: { status: "pending", sender: admitted.sender },
        reputation: [{ address: admitted.factory, opsSeen: 1, opsIncluded: 0 }],
      });
    });
  });
});
