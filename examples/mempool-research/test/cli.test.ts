import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mempoolPolicyNames } from "@bundlekit/core";
import { afterAll, describe, expect, it } from "vitest";
import {
  type CompareCommand,
  parseResearchArguments,
  settingsFromJson,
  UsageError,
} from "../src/arguments.ts";
import { compare } from "../src/compare.ts";
import type { ExperimentReport } from "../src/experiment.ts";
import { scenarioNames } from "../src/scenarios.ts";
import { generateWorkload } from "../src/workload.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const away = mkdtempSync(join(tmpdir(), "bundlekit-research-"));
afterAll(() => rmSync(away, { recursive: true, force: true }));

/** `pnpm <args>` run in `cwd`, with the pnpm running this test when there is one. */
function pnpm(args: readonly string[], cwd: string) {
  const pnpmPath = process.env.npm_execpath ?? "pnpm";
  const [command, prefix] = /\.[cm]?js$/.test(pnpmPath)
    ? [process.execPath, [pnpmPath]]
    : [pnpmPath, []];
  return spawnSync(command, [...prefix, ...args], { cwd, encoding: "utf8" });
}

describe("pnpm research, from the command line", () => {
  // The one test that runs pnpm research as a process.
  it("compares a policy written to a file anywhere with a shipped one on the congestion scenario, paths taken from where it runs", () => {
    writeFileSync(
      join(away, "largest-gas.ts"),
      `import { byArrival, erc7562Admission, fillBudget, type MempoolEntry, type MempoolPolicy } from "@bundlekit/core";

const gas = (entry: MempoolEntry) => entry.userOperation.callGasLimit;

/** Largest call gas first. */
export function createLargestGasPolicy(options: { sameSenderMempoolCount: number }): MempoolPolicy {
  return {
    name: "largest-gas",
    admit: erc7562Admission(options),
    select: (candidates, limits) => fillBudget([...candidates].sort((a, b) => (gas(a) === gas(b) ? byArrival(a, b) : gas(a) > gas(b) ? -1 : 1)), limits),
  };
}
`,
    );
    const run = pnpm(
      [
        "--dir",
        root,
        "research",
        "--policy",
        "./largest-gas.ts",
        "--policies",
        "default",
        "--scenario",
        "congestion",
        "--ops",
        "120",
        "--seeds",
        "2",
        "--bootstrap",
        "200",
        "--out",
        "results",
      ],
      away,
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^default +\d/m);
    expect(run.stdout).toMatch(/^largest-gas +\d/m);
    expect(run.stdout.trim().split("\n").at(-1)).toBe(
      "results/report.json, results/report.svg, results/report.png",
    );

    const report: ExperimentReport = JSON.parse(
      readFileSync(join(away, "results", "report.json"), "utf8"),
    );
    expect(report.title).toMatch(/^congestion: .*; seeds 1–2; baseline default$/);
    expect(report.policies.map((p) => [p.name, p.source])).toEqual([
      ["default", "built-in"],
      ["largest-gas", join(away, "largest-gas.ts")],
    ]);
    const mine = report.policies[1]!;
    for (const key of [
      "inclusion",
      "latencyP50Seconds",
      "latencyP95Seconds",
      "fairness",
      "revenueGwei",
    ]) {
      const { median, low, high, perSeed } = mine.metrics[key]!;
      expect(perSeed).toHaveLength(2);
      expect([low <= median, median <= high]).toEqual([true, true]);
    }
    expect(Object.keys(mine.versusBaseline!)).toContain("revenuePerGasGwei");
    expect(
      readFileSync(join(away, "results", "report.png"))
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
  });
});

describe("pnpm research's arguments", () => {
  it.each([
    [
      ["--policies", "lifo"],
      `unknown policy "lifo"; choose from ${mempoolPolicyNames.join(", ")}, or load one from a file with --policy ./file.ts`,
    ],
    [["--ops", "0"], '--ops must be a positive integer, got "0"'],
    [["--seed", "1.5"], '--seed must be an integer, got "1.5"'],
    [["--rate", "fast"], '--rate must be a number, got "fast"'],
    [
      ["--scenario", "rush-hour"],
      `unknown scenario "rush-hour"; choose from ${scenarioNames.join(", ")}`,
    ],
    [
      ["--setting", "bundling.maxOperations"],
      '--setting must be GROUP.FIELD=VALUE (e.g. bundling.maxOperations=50), got "bundling.maxOperations"',
    ],
    [
      ["--setting", "bundle.maxOperations=5"],
      'bundle.maxOperations: "bundle" is not a settings group (mempool, reputation, validation, gas, bundling, relaying, tracking)',
    ],
    [
      ["--setting", "mempool.size=5"],
      'mempool.size: "size" is not a setting of mempool (maxSize, ttlSeconds, sameSenderCount)',
    ],
    [
      ["--setting", "bundling.maxFeePerGas=cheap"],
      'bundling.maxFeePerGas must be an amount of wei ("1000", "5 gwei", "0.1 eth"), got "cheap"',
    ],
    [["--rates", "5"], "Unknown option '--rates'; pnpm research --help lists the options"],
    [
      ["--sender-gap-ms", "-5"],
      "Option '--sender-gap-ms' argument is ambiguous: write a value starting with a dash as --sender-gap-ms=-VALUE",
    ],
    [["--entry-point", "0.6"], '--entry-point must be one of 0.7, 0.8, 0.9, got "0.6"'],
    [["capture", "--rpc", "http://127.0.0.1:1"], "capture needs --rpc URL --from N --to M"],
  ])("refuses %j, saying what is wrong (pnpm research prints it and exits 2)", (argv, message) => {
    expect(() => parseResearchArguments(argv)).toThrow(new UsageError(message));
  });

  it("reads a comparison: policies, scenario, workload and chain knobs, and engine settings in their own types", () => {
    expect(
      parseResearchArguments([
        ...[
          "--policies",
          "default, fair",
          "--policy",
          "./a.ts",
          "--policy",
          "b.ts#mine",
          "--baseline",
          "fair",
          "--scenario",
          "congestion",
        ],
        ...[
          "--ops",
          "150",
          "--seeds",
          "3",
          "--seed",
          "7",
          "--rate",
          "120",
          "--sender-skew",
          "0",
          "--paymaster-share",
          "0.5",
          "--no-pacing",
        ],
        ...[
          "--block-time-ms",
          "2000",
          "--block-gas-limit",
          "5000000",
          "--initial-base-fee-gwei",
          "0.5",
          "--entry-point",
          "0.9",
        ],
        ...[
          "--setting",
          "bundling.maxOperations=50",
          "--setting",
          "bundling.maxFeePerGas=20 gwei",
          "--setting",
          "bundling.maxGas=4000000",
          "--setting",
          "bundling.accessList=true",
        ],
        ...["--settings", "engine.json", "--bootstrap", "500", "--out", "here"],
      ]),
    ).toEqual({
      command: "compare",
      policies: ["default", "fair"],
      policyFiles: ["./a.ts", "b.ts#mine"],
      baseline: "fair",
      scenario: "congestion",
      workloadFile: undefined,
      ops: 150,
      seed: 7,
      seeds: 3,
      workload: { rate: 120, senderSkew: 0, paymasterShare: 0.5 },
      pacing: false,
      chain: {
        blockTimeMs: 2000,
        blockGasLimit: 5_000_000n,
        initialBaseFee: 500_000_000n,
        entryPointVersion: "0.9",
      },
      settings: {
        bundling: {
          maxOperations: 50,
          maxFeePerGas: 20_000_000_000n,
          maxGas: 4_000_000n,
          accessList: true,
        },
      },
      settingsFile: "engine.json",
      bootstrap: 500,
      out: "here",
    });
    expect(
      parseResearchArguments(["capture", "--rpc", "http://node", "--from", "5", "--to", "9"]),
    ).toEqual({
      command: "capture",
      rpc: "http://node",
      fromBlock: 5n,
      toBlock: 9n,
      out: "workload.json",
    });
  });

  it("reads engine settings from JSON, amounts as numbers or with a unit", () => {
    expect(
      settingsFromJson(
        {
          bundling: { maxGas: 4_000_000, maxFeePerGas: "0.000000005 eth" },
          mempool: { ttlSeconds: 30 },
        },
        "engine.json",
      ),
    ).toEqual({
      bundling: { maxGas: 4_000_000n, maxFeePerGas: 5_000_000_000n },
      mempool: { ttlSeconds: 30 },
    });
    expect(() => settingsFromJson([], "engine.json")).toThrow(
      new UsageError(
        'engine.json must hold a JSON object of settings groups, e.g. {"bundling": {"maxOperations": 50}}',
      ),
    );
  });
});

describe("pnpm research's comparison of what the command line names", () => {
  const command = (argv: readonly string[]) => parseResearchArguments(argv) as CompareCommand;
  const write = (name: string, json: unknown) => {
    writeFileSync(join(away, name), typeof json === "string" ? json : JSON.stringify(json));
    return name;
  };

  it("replays a workload file as it replays generated ones, relative to where it runs", async () => {
    const workload = {
      ...generateWorkload({ ops: 80, seed: 9, rate: 40 }),
      description: "captured from somewhere",
    };
    const file = write("workload.json", workload);
    const report = await compare(
      command(["--workload", file, "--policies", "default,fifo", "--bootstrap", "100"]),
      { cwd: away },
    );
    expect(report.title).toBe(
      "workload file: captured from somewhere; one workload; baseline default",
    );
    expect(report.workload.seeds).toEqual([null]);
    expect(report.runs.map((r) => r.offered)).toEqual([80, 80]);
    const { low, high } = report.policies[0]!.metrics.latencyP50Seconds!;
    expect(high).toBeGreaterThan(low);
  });

  it.each([
    [["--rate", "0"], "--rate must be above 0, got 0"],
    [["--sender-gap-ms=-5"], "--sender-gap-ms must be at least 0, got -5"],
    [
      ["--baseline", "lifo"],
      'the baseline "lifo" is not among the policies compared (default, fifo)',
    ],
    [
      ["--policies", ""],
      "no policy to compare: name shipped ones with --policies, or load one with --policy ./file.ts",
    ],
    [
      ["--policy", "./nowhere.ts"],
      `--policy ./nowhere.ts: no such file ${join(away, "nowhere.ts")}`,
    ],
    [
      ["--settings", "bad-settings.json"],
      'bundling.maxOperations must be an integer from 1 to 9007199254740991, got "0"',
    ],
    [
      ["--settings", "missing.json"],
      `--settings missing.json: ENOENT: no such file or directory, open '${join(away, "missing.json")}'`,
    ],
    [
      ["--workload", "not-a-workload.json"],
      '--workload not-a-workload.json: must be a JSON object with an "operations" array (a workload file)',
    ],
    [
      ["--workload", "out-of-order.json"],
      "--workload out-of-order.json: operation 1: at (5) is before the previous operation's (10): operations must be in arrival order",
    ],
    [
      ["--workload", "bad-fee.json"],
      "--workload bad-fee.json: operation 0: maxFeePerGas must be a whole number as a decimal string, got 5",
    ],
    [
      ["--setting", "validation.mode=safe"],
      'validation.mode must be unsafe in the lab: the simulated chain runs no EVM to trace, got "safe"',
    ],
  ])("refuses %j before replaying, saying what is wrong", async (argv, message) => {
    write("bad-settings.json", { bundling: { maxOperations: 0 } });
    write("not-a-workload.json", [1, 2]);
    const op = {
      sender: 0,
      nonce: 0,
      maxPriorityFeePerGas: "1",
      maxFeePerGas: "5",
      callGasLimit: "50000",
    };
    write("out-of-order.json", {
      operations: [
        { ...op, at: 10 },
        { ...op, at: 5, nonce: 1 },
      ],
    });
    write("bad-fee.json", { operations: [{ ...op, at: 0, maxFeePerGas: 5 }] });
    await expect(
      compare(command(["--policies", "default,fifo", "--ops", "20", "--seeds", "1", ...argv]), {
        cwd: away,
      }),
    ).rejects.toThrow(new UsageError(message));
  });
});
