import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadPolicyFile, PolicyFileError, resolvePolicies } from "../src/policies.ts";
import { replay } from "../src/replay.ts";
import { generateWorkload } from "../src/workload.ts";

// Inside the lab, so that the files resolve @bundlekit/core as the lab does (a file anywhere else
// relies on the lab's resolve hook, which the command-line test covers).
const lab = fileURLToPath(new URL("..", import.meta.url));
mkdirSync(join(lab, "node_modules", ".cache"), { recursive: true });
const dir = mkdtempSync(join(lab, "node_modules", ".cache", "policies-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A policy module written to `name`. */
function file(name: string, source: string): string {
  writeFileSync(join(dir, name), source);
  return name;
}

const lifo = `import { erc7562Admission, fillBudget, type MempoolPolicy } from "@bundlekit/core";
/** Newest first. */
export function createLifoPolicy(options: { sameSenderMempoolCount?: number; now(): number }): MempoolPolicy {
  return {
    name: "lifo",
    admit: erc7562Admission(options),
    select: (candidates, limits) => fillBudget([...candidates].sort((a, b) => b.receivedAt - a.receivedAt), limits),
  };
}
`;

describe("policies of one's own (--policy FILE)", () => {
  it("loads a factory, the default export or the only policy of a module, or the export named after #", async () => {
    const factory = await loadPolicyFile(file("lifo.ts", lifo), dir);
    expect(factory).toMatchObject({ name: "lifo", source: join(dir, "lifo.ts") });
    const object = await loadPolicyFile(
      file("object.ts", `${lifo}export default createLifoPolicy({ now: () => 0 });\n`),
      dir,
    );
    expect(object.name).toBe("lifo");
    const named = await loadPolicyFile(
      file(
        "two.ts",
        `${lifo}export const other = 1;\nexport function createOther() { return { name: "other", admit: () => ({ replaces: undefined }), select: () => [] }; }\n`,
      ) + "#createOther",
      dir,
    );
    expect(named.name).toBe("other");
  });

  it("gives each replay a fresh policy: a factory is called again, a policy object's module loaded again", async () => {
    const counting = `import { erc7562Admission, fillBudget, type MempoolPolicy } from "@bundlekit/core";
let bundles = 0;
export const policy: MempoolPolicy = {
  name: "counting",
  admit: erc7562Admission(),
  select(candidates, limits) {
    bundles++;
    // After its tenth bundle in one replay it stops bundling: state carried over would show.
    return bundles > 10 ? [] : fillBudget(candidates, limits);
  },
};
`;
    const entry = await loadPolicyFile(file("counting.ts", counting), dir);
    const workload = generateWorkload({
      ops: 60,
      seed: 1,
      rate: 10,
      failureRate: 0,
      revertRate: 0,
    });
    const first = await replay(workload, entry.make);
    const second = await replay(workload, entry.make);
    expect(second.included).toBe(first.included);
    expect(first.included).toBeGreaterThan(0);
  });

  it.each([
    [
      "a missing file",
      "missing.ts",
      undefined,
      /^--policy missing\.ts: no such file .*missing\.ts$/,
    ],
    [
      "a module without a policy",
      "nothing.ts",
      "export const answer = 42;\n",
      /^--policy nothing\.ts: the module exports no MempoolPolicy and no function making one \(it exports answer\)$/,
    ],
    [
      "a module of several",
      "several.ts",
      `${lifo}export function another() {}\n`,
      /^--policy several\.ts: the module exports several policies or functions \(another, createLifoPolicy\): choose one with several\.ts#<name>$/,
    ],
    [
      "a factory making no policy",
      "bad-factory.ts",
      "export default () => ({ name: 'half' });\n",
      /^--policy bad-factory\.ts: export "default" is a function, but it returned an object without name, admit and select, not a MempoolPolicy/,
    ],
    [
      "an export that is not there",
      "lifo5.ts#nope",
      lifo,
      /^--policy lifo5\.ts#nope: the module has no export "nope" \(it exports createLifoPolicy\)$/,
    ],
    [
      "a module that does not parse",
      "syntax.ts",
      "export const = ;\n",
      /^--policy syntax\.ts: cannot load .*syntax\.ts: /,
    ],
  ])("refuses %s, saying what is wrong", async (_, spec, source, message) => {
    if (source !== undefined) file(spec.split("#")[0]!, source);
    const error = await loadPolicyFile(spec, dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyFileError);
    expect((error as Error).message).toMatch(message);
  });

  it("puts the shipped policies named first, then the files; two of one name are refused", async () => {
    const entries = await resolvePolicies(["fifo", "default"], [file("lifo2.ts", lifo)], dir);
    expect(entries.map((e) => [e.name, e.source === "built-in"])).toEqual([
      ["fifo", true],
      ["default", true],
      ["lifo", false],
    ]);
    await expect(
      resolvePolicies([], [file("lifo3.ts", lifo), file("lifo4.ts", lifo)], dir),
    ).rejects.toThrow(
      /^two policies are named "lifo" \(.*lifo3\.ts and .*lifo4\.ts\): give each its own name$/,
    );
  });
});
