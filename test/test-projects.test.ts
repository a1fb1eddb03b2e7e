import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/** `pnpm vitest run <files>` in a fresh process, as a developer runs it, without this run's own variables. */
function vitestRun(files: readonly string[]) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        !name.startsWith("VITEST") &&
        name !== "BUNDLEKIT_ORDER_SEED_ANNOUNCED" &&
        name !== "NODE_OPTIONS",
    ),
  );
  return spawnSync(process.execPath, ["node_modules/vitest/vitest.mjs", "run", ...files], {
    cwd: root,
    env,
    encoding: "utf8",
  });
}

describe("the test run's projects (vitest.config.ts)", () => {
  it("run a pure-function policy test without finding or starting PostgreSQL", () => {
    const run = vitestRun(["packages/core/src/mempool/mempool-policies.test.ts"]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^bundlekit: test order shuffled with seed \d+/m);
    expect(run.stderr).not.toMatch(/PostgreSQL/);
  });
});
