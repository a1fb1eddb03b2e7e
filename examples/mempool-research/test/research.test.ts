import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mempoolPolicies, mempoolPolicyNames } from "@bundlekit/core";
import { afterAll, describe, expect, it } from "vitest";
import { parseResearchArguments, UsageError } from "../src/arguments.ts";
import { replay } from "../src/replay.ts";
import { generateWorkload } from "../src/workload.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = mkdtempSync(join(os.tmpdir(), "bundlekit-research-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("mempool research lab", () => {
  it("generates the same workload for the same seed, and another for another seed", () => {
    const a = generateWorkload({ ops: 300, seed: 7 });
    expect(generateWorkload({ ops: 300, seed: 7 })).toEqual(a);
    expect(generateWorkload({ ops: 300, seed: 8 }).operations).not.toEqual(a.operations);
    expect(a.operations.map((op) => op.at)).toEqual([...a.operations.map((op) => op.at)].sort((x, y) => x - y));
    // Heavy-tailed: the busiest sender sends far more than the median one.
    const counts = new Map<number, number>();
    for (const op of a.operations) counts.set(op.sender, (counts.get(op.sender) ?? 0) + 1);
    const sorted = [...counts.values()].sort((x, y) => y - x);
    expect(sorted[0]!).toBeGreaterThan(5 * sorted[Math.floor(sorted.length / 2)]!);
  });

  it("replays a workload through the real engine: every admitted operation included or dropped, failures dropped with their reason", async () => {
    const workload = generateWorkload({ ops: 200, seed: 3, failureRate: 0.1, revertRate: 0.1 });
    const report = await replay(workload, mempoolPolicies.default());
    const dropped = Object.values(report.dropped).reduce((a, b) => a + b, 0);
    expect(report.included + dropped).toBe(report.admitted);
    expect(report.admitted + Object.values(report.refused).reduce((a, b) => a + b, 0)).toBe(200);
    expect(report.dropped["AA23 reverted"]).toBeGreaterThan(0);
    expect(report.reverted).toBeGreaterThan(0);
    expect(report.latencyBlocks.p50).toBeGreaterThanOrEqual(1);
    expect(report.latencyBlocks.p99).toBeGreaterThanOrEqual(report.latencyBlocks.p95);
    expect(BigInt(report.revenue.earned)).toBeGreaterThan(0n);
    expect(report.fairness).toBeGreaterThan(0);
    expect(report.fairness).toBeLessThanOrEqual(1);
    // Deterministic: the same workload and policy give the same outcome.
    const again = await replay(workload, mempoolPolicies.default());
    expect({ ...again, wallSeconds: 0 }).toEqual({ ...report, wallSeconds: 0 });
  });

  it("replays on the simulated chain of EntryPoint v0.8 and v0.9 as on v0.7: the same operations admitted and included", async () => {
    const workload = generateWorkload({ ops: 120, seed: 5 });
    const on07 = await replay(workload, mempoolPolicies.default());
    for (const entryPointVersion of ["0.8", "0.9"] as const) {
      const report = await replay(workload, mempoolPolicies.default(), { entryPointVersion });
      expect({ admitted: report.admitted, included: report.included, dropped: report.dropped }).toEqual({ admitted: on07.admitted, included: on07.included, dropped: on07.dropped });
      expect(report.included).toBeGreaterThan(0);
    }
  });

  // The one test that runs pnpm research as a process.
  it("compares policies from the command line: a table, report.json and report.svg", () => {
    const run = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", "src/main.ts", "--ops", "150", "--policies", "default,fair", "--out", out], { cwd: root, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^default +\d+\/150/m);
    expect(run.stdout).toMatch(/^fair +\d+\/150/m);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
    expect(report.reports.map((r: { policy: string }) => r.policy)).toEqual(["default", "fair"]);
    expect(existsSync(join(out, "report.svg"))).toBe(true);
    expect(readFileSync(join(out, "report.svg"), "utf8")).toContain('aria-label="policy: fair;');
  });

  it.each([
    [["--policies", "lifo"], `unknown policy "lifo"; choose from ${mempoolPolicyNames.join(", ")}`],
    [["--ops", "0"], '--ops must be a positive integer, got "0"'],
    [["--seed", "1.5"], '--seed must be an integer, got "1.5"'],
    [["--entry-point", "0.6"], '--entry-point must be one of 0.7, 0.8, 0.9, got "0.6"'],
    [["capture", "--rpc", "http://127.0.0.1:1"], "capture needs --rpc URL --from N --to M"],
  ])("refuses %j, saying what is wrong (pnpm research prints it and exits 2)", (argv, message) => {
    expect(() => parseResearchArguments(argv)).toThrow(new UsageError(message));
  });

  it("reads a comparison and a capture from the command line", () => {
    expect(parseResearchArguments(["--policies", "default, fair", "--ops", "150", "--out", "here"])).toEqual({
      command: "compare",
      policies: ["default", "fair"],
      ops: 150,
      seed: 1,
      workload: undefined,
      out: "here",
      entryPointVersion: "0.7",
    });
    expect(parseResearchArguments(["--entry-point", "0.9"])).toMatchObject({ command: "compare", entryPointVersion: "0.9" });
    expect(parseResearchArguments(["capture", "--rpc", "http://node", "--from", "5", "--to", "9"])).toEqual({
      command: "capture",
      rpc: "http://node",
      fromBlock: 5n,
      toBlock: 9n,
      out: "workload.json",
    });
  });
});
