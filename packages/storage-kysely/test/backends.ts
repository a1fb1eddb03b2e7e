import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";

/** What a store contract suite needs of a backend: a store, and how to reopen, share and clean up. */
export interface StoreUnderTest<S> {
  store: S;
  reopen?: () => Promise<S>;
  openAnother?: () => Promise<S>;
  cleanup?: () => Promise<void>;
}

// The test run finds PostgreSQL or brings one (test/global-setup.ts): these tests never skip.
const connectionString = inject("postgresUrl");

/** A SQLite file in a fresh temporary directory; every open reaches the same data. */
export async function onSqliteFile<S>(open: (filename: string) => Promise<S>): Promise<StoreUnderTest<S>> {
  const directory = await mkdtemp(join(tmpdir(), "bundlekit-sqlite-"));
  const openFile = () => open(join(directory, "bundler.db"));
  return { store: await openFile(), reopen: openFile, openAnother: openFile, cleanup: () => rm(directory, { recursive: true, force: true }) };
}

/** A fresh PostgreSQL schema, first on the search_path of every pool that opens it; dropped on cleanup. */
export async function onPostgresSchema<S>(open: (pool: pg.Pool) => Promise<S>): Promise<StoreUnderTest<S>> {
  const admin = new pg.Pool({ connectionString, max: 1 });
  const schema = `bundlekit_test_${randomUUID().replaceAll("-", "")}`;
  const cleanup = async () => {
    try {
      await admin.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await admin.end();
    }
  };
  const openSchema = () => open(new pg.Pool({ connectionString, options: `-c search_path=${schema}` }));
  try {
    await admin.query(`create schema ${schema}`);
    return { store: await openSchema(), reopen: openSchema, openAnother: openSchema, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * New PostgreSQL schemas for the tests of the calling `describe` block, each first on the
 * `search_path` of the URL it comes with; all dropped after the block. `admin` queries the
 * server directly.
 */
export function postgresSchemas(prefix: string): {
  admin: pg.Pool;
  newSchema(): Promise<{ schema: string; url: URL }>;
} {
  const admin = new pg.Pool({ connectionString, max: 1 });
  const schemas: string[] = [];
  afterAll(async () => {
    try {
      for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await admin.end();
    }
  });
  return {
    admin,
    async newSchema() {
      const schema = `${prefix}_${randomUUID().replaceAll("-", "")}`;
      schemas.push(schema);
      await admin.query(`create schema ${schema}`);
      const url = new URL(connectionString);
      url.searchParams.set("options", `-c search_path=${schema}`);
      return { schema, url };
    },
  };
}

/** New SQLite file names for the tests of the calling `describe` block, in one temporary directory removed after it. */
export function sqliteFiles(prefix: string): { newFile(): string } {
  let directory: string | undefined;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), `${prefix}-`));
  });
  afterAll(() => (directory ? rm(directory, { recursive: true, force: true }) : undefined));
  return { newFile: () => join(directory!, `${randomUUID()}.sqlite`) };
}
