import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/** The order's seed: `BUNDLEKIT_TEST_SEED` to repeat a run, else vitest's own (the time); printed at the start. */
function seedFromEnvironment(): number | undefined {
  const given = process.env.BUNDLEKIT_TEST_SEED;
  if (given === undefined || given === "") return undefined;
  const seed = Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`BUNDLEKIT_TEST_SEED must be a non-negative integer, got "${given}"`);
  return seed;
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "bench/test/**/*.test.ts"],
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
    globalSetup: ["test/global-setup.ts"],
    coverage: {
      provider: "v8",
      include: ["packages/*/src/**/*.ts", "examples/*/src/**/*.ts"],
      exclude: ["**/*.test.ts", "packages/testing/**"],
      reporter: ["text-summary", "html"],
    },
  },
});
