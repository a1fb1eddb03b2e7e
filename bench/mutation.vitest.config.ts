import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * The tests a mutation run (`pnpm mutation`) runs against each mutant: the fast unit tests beside
 * the sources, none of which starts anvil or PostgreSQL. Each mutant runs only the tests that
 * cover it (Stryker's `perTest` coverage).
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["packages/core/src/**/*.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
  },
});
