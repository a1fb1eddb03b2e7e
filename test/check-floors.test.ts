import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkFloors, type FloorsConfig } from "../scripts/check-floors.ts";

const config: FloorsConfig = {
  root: "src",
  floors: [["domain"], ["ports"], ["chain", "mempool"], ["engine"]],
  allowed: {},
};

const repos: string[] = [];
afterEach(() => {
  for (const repo of repos.splice(0)) rmSync(repo, { recursive: true, force: true });
});

/** A throw-away source tree: path under `src/` → contents. */
function tree(files: Record<string, string>): string {
  const repo = mkdtempSync(join(tmpdir(), "floors-"));
  repos.push(repo);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, "src", path)), { recursive: true });
    writeFileSync(join(repo, "src", path), text);
  }
  return repo;
}

const base = {
  "domain/op.ts": "export type Op = { sender: string };\n",
  "ports/store.ts":
    'import type { Op } from "../domain/op.ts";\nexport interface Store { add(op: Op): void }\n',
  "chain/client.ts": 'import type { Store } from "../ports/store.ts";\nexport type C = Store;\n',
  "mempool/pool.ts": 'export { type Store } from "../ports/store.ts";\n',
  "engine/engine.ts": 'import "../chain/client.ts";\nimport("../mempool/pool.ts");\n',
  "index.ts": 'export * from "./engine/engine.ts";\n',
};

describe("check:floors", () => {
  it("passes a tree whose imports all point down, tests and index.ts aside", () => {
    const root = tree({ ...base, "domain/op.test.ts": 'import "../engine/engine.ts";\n' });
    expect(checkFloors(root, config)).toEqual([]);
  });

  it("names an import that runs up a floor, a static, re-exported or dynamic one alike", () => {
    const root = tree({
      ...base,
      "domain/op.ts": 'import type { Store } from "../ports/store.ts";\nexport type Op = Store;\n',
      "ports/store.ts":
        'export { x } from "../engine/engine.ts";\nconst y = import("../chain/client.ts");\n',
    });
    expect(checkFloors(root, config)).toEqual([
      "domain/op.ts -> ports/store.ts: runs up from floor 0 (domain) to floor 1 (ports)",
      "ports/store.ts -> engine/engine.ts: runs up from floor 1 (ports) to floor 3 (engine)",
      "ports/store.ts -> chain/client.ts: runs up from floor 1 (ports) to floor 2 (chain)",
    ]);
  });

  it("names an import between siblings on one floor, out of src/, and a folder on no floor", () => {
    const root = tree({
      ...base,
      "chain/client.ts": 'import "../mempool/pool.ts";\nimport "../../outside.ts";\n',
      "extra/thing.ts": "export const thing = 1;\n",
    });
    expect(checkFloors(root, config)).toEqual([
      "src/extra/ is on no floor (scripts/floors.json)",
      "chain/client.ts -> mempool/pool.ts: imports a sibling on floor 2",
      "chain/client.ts -> ../outside.ts: leaves src/ or reaches a folder on no floor",
    ]);
  });

  it("lets an allowed exception through, and fails once it no longer occurs", () => {
    const up = { ...base, "domain/op.ts": 'import "../ports/store.ts";\n' };
    const allowed = { "domain/op.ts -> ports/store.ts": "to fix" };
    expect(checkFloors(tree(up), { ...config, allowed })).toEqual([]);
    expect(checkFloors(tree(base), { ...config, allowed })).toEqual([
      'allowed "domain/op.ts -> ports/store.ts" no longer occurs: remove it from scripts/floors.json',
    ]);
  });
});
