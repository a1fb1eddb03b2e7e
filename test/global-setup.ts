import type { TestProject } from "vitest/node";
import { announceOrderSeed } from "./order-seed.ts";
import { findOrStartPostgres } from "./postgres-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Connection string of the PostgreSQL database the tests use; read it with `inject("postgresUrl")`. */
    postgresUrl: string;
  }
}

const described = {
  environment: "the PostgreSQL in BUNDLEKIT_TEST_DATABASE_URL",
  running: "the PostgreSQL at 127.0.0.1:5432",
  embedded: "a PostgreSQL started for this run (none at 127.0.0.1:5432)",
} as const;

/**
 * Once per test run that has a file of the `postgres` project (vitest.config.ts): say the seed of
 * the shuffled order, so that a failure can be repeated; find PostgreSQL or bring one, and stop it
 * afterwards if this run started it.
 */
export default async function setup(project: TestProject) {
  announceOrderSeed(project);
  const postgres = await findOrStartPostgres();
  process.stderr.write(`bundlekit: tests use ${described[postgres.source]}\n`);
  project.provide("postgresUrl", postgres.url);
  return () => postgres.stop();
}
