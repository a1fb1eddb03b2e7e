import { randomUUID } from "node:crypto";
import { mempoolStoreContract } from "@bundlekit/core/testing";
import pg from "pg";
import { createPostgresMempoolStore } from "../src/index.ts";

// CI always runs PostgreSQL: an unreachable server fails these tests rather than skipping them.
const connectionString =
  process.env.BUNDLEKIT_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

// Each test gets a schema of its own, first on the search_path of every pool that opens it.
mempoolStoreContract("PostgreSQL", async () => {
  const admin = new pg.Pool({ connectionString, max: 1 });
  const schema = `bundlekit_test_${randomUUID().replaceAll("-", "")}`;
  const cleanup = async () => {
    try {
      await admin.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await admin.end();
    }
  };
  const open = () =>
    createPostgresMempoolStore({
      pool: new pg.Pool({ connectionString, options: `-c search_path=${schema}` }),
    });
  try {
    await admin.query(`create schema ${schema}`);
    return { store: await open(), reopen: open, openAnother: open, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
});
