import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The modules a fresh Node process loads for `import(specifier)`, resolved by package name from
 * `packages/effect` (which depends on core) with the `development` condition, as an app in the
 * workspace would. A child process, because this one has loaded vitest already.
 */
function modulesLoadedBy(specifiers: readonly string[]): string[] {
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); loaded.push(result.url); return result; } });
    for (const specifier of ${JSON.stringify(specifiers)}) await import(specifier);
    process.stdout.write(JSON.stringify(loaded));
  `;
  const run = spawnSync(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", "--conditions=development", "--input-type=module", "-e", script],
    { cwd: fileURLToPath(new URL("../packages/effect/", import.meta.url)), encoding: "utf8" },
  );
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

/** Test runners and their assertion libraries, by the path of the package that holds them. */
const testLibrary = /\/node_modules\/(vitest|@vitest\/[^/]+|chai|tinyspy|@bundlekit\/testing)\/|\/packages\/testing\//;

/** Database drivers and the query builder on them, and the package that holds both. */
const databaseLibrary = /\/node_modules\/(better-sqlite3|pg|pg-[^/]+|kysely|@bundlekit\/storage-kysely)\/|\/packages\/storage-kysely\//;

describe("the library entries", () => {
  it("load no test library when an app imports @bundlekit/core and @bundlekit/effect", () => {
    const loaded = modulesLoadedBy(["@bundlekit/core", "@bundlekit/core/simulation", "@bundlekit/effect"]);
    expect(loaded.some((url) => url.includes("/packages/core/src/index.ts"))).toBe(true);
    expect(loaded.some((url) => url.includes("/packages/effect/src/index.ts"))).toBe(true);
    expect(loaded.filter((url) => testLibrary.test(url))).toEqual([]);
  });

  it("load no database driver when an app imports @bundlekit/effect: the SQL store layers are storage-kysely's", () => {
    const loaded = modulesLoadedBy(["@bundlekit/effect"]);
    expect(loaded.some((url) => url.includes("/packages/effect/src/index.ts"))).toBe(true);
    expect(loaded.filter((url) => databaseLibrary.test(url))).toEqual([]);
  });
});
