import type { TestProject } from "vitest/node";

/**
 * Once per test run, whichever projects it has: say the seed of the shuffled order, so that a
 * failure can be repeated.
 */
export function announceOrderSeed(project: TestProject): void {
  if (process.env.BUNDLEKIT_ORDER_SEED_ANNOUNCED) return;
  process.env.BUNDLEKIT_ORDER_SEED_ANNOUNCED = "1";
  const { shuffle, seed } = project.globalConfig.sequence;
  if (shuffle)
    process.stderr.write(
      `bundlekit: test order shuffled with seed ${seed}; repeat it with BUNDLEKIT_TEST_SEED=${seed}\n`,
    );
}

/** The global set-up of the files that need no database: the order's seed, nothing else. */
export default function setup(project: TestProject) {
  announceOrderSeed(project);
}
