import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/** The order's seed: `BUNDLEKIT_TEST_SEED` to repeat a run, else vitest's own (the time); printed at the start. */
function seedFromEnvironment(): number | undefined {
  const given = process.env.BUNDLEKIT_TEST_SEED;
  if (given === undefined || given === "") return undefined;
  const seed = Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`BUNDLEKIT_TEST_SEED must be a non-negative integer, got "${given}"`);
  return seed;
}

const allTests = ["test/**/*.test.ts", "packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "bench/test/**/*.test.ts"];
/**
 * The test files that may use PostgreSQL (`inject("postgresUrl")`): the storage package's, the
 * service's and the Effect face's. Only a run that includes one of them finds or brings a
 * PostgreSQL; any other file (a policy's, the engine's, the lab's) runs without a database.
 */
const postgresTests = ["packages/storage-kysely/test/**/*.test.ts", "packages/server/test/**/*.test.ts", "packages/effect/test/**/*.test.ts", "test/postgres-server.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at once even on 2 cores (vitest would take one): a file spends part of its time
    // waiting on anvil, a child process or a polling client, and the other file runs meanwhile.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Files and the tests in them run in an order shuffled by the seed: every test must pass alone and in any order.
    sequence: { shuffle: true, seed: seedFromEnvironment() },
    // expect.poll waits for an event, never measures one: its timeout only bounds a hang.
    expect: { poll: { timeout: 30_000 } },
    // Vitest runs a project's global set-up only when the run has a file of that project.
    projects: [
      { extends: true, test: { name: "postgres", include: postgresTests, globalSetup: ["test/global-setup.ts"] } },
      { extends: true, test: { name: "no-database", include: allTests, exclude: [...configDefaults.exclude, ...postgresTests], globalSetup: ["test/order-seed.ts"] } },
    ],
    coverage: {
      provider: "v8",
      include: ["packages/*/src/**/*.ts", "examples/*/src/**/*.ts"],
      exclude: ["**/*.test.ts", "packages/testing/**"],
      reporter: ["text-summary", "html"],
    },
  },
});
