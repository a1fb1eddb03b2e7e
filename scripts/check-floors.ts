/**
 * The floors of `@bundlekit/core`: its source folders in layers, listed bottom first in
 * `scripts/floors.json`. A module imports its own folder and folders on lower floors only, never a
 * folder above it nor a sibling on its own floor, and never a file outside `src/`. Tests
 * (`*.test.ts`) sit above everything and are not checked; `src/index.ts` is the top.
 *
 * `pnpm check:floors` (in CI, after lint) lists every import that breaks the rule and fails.
 * `allowed` in the JSON names the known exceptions still to fix: `"from -> to"` (two files under
 * `src/`) mapped to why it is wrong or where the import should go. An entry that no longer occurs fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The floors, bottom first: each a list of sibling folders of `root`. */
export interface FloorsConfig {
  root: string;
  floors: string[][];
  allowed: Record<string, string>;
}

/** Every import under `repo/config.root` that breaks the floors, one line each; empty when none does. */
export function checkFloors(repo: string, config: FloorsConfig): string[] {
  const root = join(repo, config.root);
  const floorOf = new Map<string, number>();
  config.floors.forEach((folders, floor) => {
    for (const folder of folders) floorOf.set(folder, floor);
  });

  const problems: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory() && !floorOf.has(entry.name)) {
      problems.push(`${config.root}/${entry.name}/ is on no floor (scripts/floors.json)`);
    }
  }

  const allowed = new Set(Object.keys(config.allowed));
  const used = new Set<string>();
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter(
    (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f.includes("/"),
  );
  for (const file of files.sort()) {
    const from = file.split("/")[0]!;
    const fromFloor = floorOf.get(from);
    if (fromFloor === undefined) continue;
    const source = readFileSync(join(root, file), "utf8");
    for (const { fileName: specifier } of ts.preProcessFile(source, true, true).importedFiles) {
      if (!specifier.startsWith(".")) continue;
      const target = relative(root, resolve(dirname(join(root, file)), specifier));
      const to = target.split("/")[0]!;
      if (to === from) continue;
      const toFloor = target.startsWith("..") ? undefined : floorOf.get(to);
      if (toFloor !== undefined && toFloor < fromFloor) continue;
      const pair = `${file} -> ${target}`;
      if (allowed.has(pair)) {
        used.add(pair);
        continue;
      }
      const why =
        toFloor === undefined
          ? "leaves src/ or reaches a folder on no floor"
          : toFloor === fromFloor
            ? `imports a sibling on floor ${fromFloor}`
            : `runs up from floor ${fromFloor} (${from}) to floor ${toFloor} (${to})`;
      problems.push(`${pair}: ${why}`);
    }
  }
  for (const pair of allowed) {
    if (!used.has(pair)) {
      problems.push(`allowed "${pair}" no longer occurs: remove it from scripts/floors.json`);
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const config = JSON.parse(
    readFileSync(join(repo, "scripts/floors.json"), "utf8"),
  ) as FloorsConfig;
  const problems = checkFloors(repo, config);
  if (problems.length > 0) {
    console.error(`check:floors: ${problems.length} problem(s) with the floors of ${config.root}:`);
    for (const problem of problems) console.error(`  ${problem}`);
    process.exit(1);
  }
  console.log(
    `check:floors: ${config.floors.length} floors in ${config.root}, every import points down`,
  );
}
