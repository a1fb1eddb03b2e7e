import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openLoopSchedule, parseLoadOptions } from "../load-options.ts";
import { type OpRecord, summarise, summaryTable } from "../load-report.ts";
import { UsageError } from "../script.ts";
import { medianOf } from "../stats.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const outDir = mkdtempSync(join(os.tmpdir(), "bundlekit-bench-test-"));

/** Run bench/load.ts as a user would, from the repository root. */
function runBench(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
} {
  const child = spawn(
    process.execPath,
    ["--experimental-strip-types", "--no-warnings", "bench/load.ts", ...args],
    { cwd: root },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe("bench/load.ts", () => {
  // The one run of the benchmark in these tests: small, offered open-loop, a block a second.
  it("records every metric of a small open-loop run with estimates and receipts through the service on a devnet with a block time, with the command and the machine", {
    timeout: 180_000,
  }, async () => {
    const args = ["--ops", "4", "--accounts", "2", "--rate", "4", "--block-time", "1", "--estimate", "--receipts", "service", "--out", outDir];
    const started = Date.now();
    const { code, stdout, stderr } = await runBench(args).done;
    const ended = Date.now();
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("accepted ops/s");

    const file = join(outDir, "load-v0.7-4ops-2accounts-estimate-receipts.json");
    const report = JSON.parse(readFileSync(file, "utf8"));
    expect(report.command).toBe(
      `node --experimental-strip-types --no-warnings bench/load.ts ${args.join(" ")}`,
    );
    // The date of this run (an order of events, not a duration).
    expect(Date.parse(report.date)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(report.date)).toBeLessThanOrEqual(ended);
    expect(report.machine.cores).toBe(os.cpus().length);
    expect(report.machine.node).toBe(process.version);
    expect(report.parameters).toMatchObject({
      ops: 4,
      accounts: 2,
      version: "0.7",
      concurrency: 2,
      rate: 4,
      blockTime: 1,
      estimate: true,
      receipts: "service",
      runs: 1,
    });

    const r = report.results;
    expect(r).toMatchObject({
      sent: 4,
      accepted: 4,
      rejected: 0,
      included: 4,
      includedSuccessfully: 4,
      notIncludedBeforeTimeout: 0,
      errors: [],
    });
    expect(r.bundles).toBeGreaterThanOrEqual(2); // one operation per sender per bundle, two nonces each
    expect(r.acceptedOpsPerSecond).toBeGreaterThan(0);
    expect(r.includedOpsPerSecond).toBeGreaterThan(0);
    for (const latency of [r.estimateLatencyMs, r.sendLatencyMs, r.timeToReceiptMs]) {
      expect(latency.count).toBe(4);
      expect(latency.p50).toBeGreaterThan(0);
      expect(latency.p95).toBeGreaterThanOrEqual(latency.p50);
      expect(latency.max).toBeGreaterThanOrEqual(latency.p95);
    }
    // An operation is on chain only after the service accepted it, and no sooner than the next block.
    expect(r.timeToReceiptMs.p50).toBeGreaterThan(r.sendLatencyMs.p50);
    expect(r.timeToReceiptMs.max).toBeGreaterThan(r.sendLatencyMs.max);
    expect(r.cpuSeconds.service).toBeGreaterThan(0);
    expect(r.cpuSeconds.anvil).toBeGreaterThan(0);
    expect(r.serviceCpuSecondsPerOp).toBeGreaterThan(0);
    expect(r.serviceCpuSecondsPerOp).toBeLessThan(r.totalSeconds * os.cpus().length);
    expect(r.nodeCpuSecondsPerOp).toBeGreaterThan(0);
    // Counted at the proxy in front of anvil: each operation's estimate calls the gas search, and
    // its send traces the validation on the node; bundling sends the bundles.
    const perOp = r.nodeRequestsPerOp;
    expect(perOp.byMethod.estimate["eth_call 0x0efeea38"]).toBeGreaterThanOrEqual(1);
    expect(perOp.byMethod.send["debug_traceCall 0xc3bce009"]).toBeGreaterThanOrEqual(1);
    expect(perOp.byMethod.bundle.eth_sendRawTransaction).toBeGreaterThan(0);
    // Each client saw its receipt through the service, whose lookups asked the node.
    expect(perOp.byPhase.receipt).toBeGreaterThan(0);
    expect(perOp.byMethod.other).toBeUndefined();
    expect(perOp.total).toBeCloseTo(
      Object.values(perOp.byPhase as Record<string, number>).reduce((a, b) => a + b, 0),
      1,
    );
    expect(report.runs).toEqual([r]);

    const summary = readFileSync(join(outDir, "load-v0.7-4ops-2accounts-estimate-receipts.md"), "utf8");
    expect(summary).toContain(report.command);
    expect(summary).toContain("| metric | value |");
    expect(summary).toContain(`| time to receipt p50 / p95 (ms) | ${r.timeToReceiptMs.p50} / ${r.timeToReceiptMs.p95} |`);
  });

  it("summarises several runs in one table: the median, then each run", () => {
    const run = (sendLatencies: number[]) =>
      summarise(
        sendLatencies.map((latency, i) => ({
          account: i,
          nonce: 1n,
          hash: `0x${String(i).padStart(64, "0")}`,
          op: {},
          sentAt: 0,
          acceptedAt: latency,
          includedAt: 1_000,
          success: true,
          transactionHash: `0x${"ab".repeat(32)}`,
        })) as OpRecord[],
        {
          sendingMs: 500,
          totalMs: 1_000,
          chainIdMs: [],
          timedOut: false,
          cpuSeconds: { service: 0.5, anvil: 0.2, loadGenerator: 0.1 },
          nodeRequests: { counts: { send: { debug_traceCall: 2 } }, milliseconds: { send: { debug_traceCall: 6 } } },
          serviceIdleCpuPerSecond: 0.01,
        },
        { logCounts: {} },
      );
    const runs = [run([100, 300]), run([200, 400]), run([50, 250])];
    const table = summaryTable({
      date: "2026-11-25T00:00:00.000Z",
      command: "pnpm bench --ops 2 --accounts 2 --runs 3",
      commit: "abc1234",
      machine: { cores: 2, node: "v24.21.0", loadAverageAtStart: [0, 0, 0] } as never,
      parameters: { ...parseLoadOptions(["--ops", "2", "--accounts", "2", "--runs", "3"]) },
      results: medianOf(runs),
      runs,
    });
    expect(table).toContain("| metric | median | run 1 | run 2 | run 3 |");
    // Each run's p50 and p95 of its two send latencies, and the medians of those: 200 of 200, 300, 150; 290 of 290, 390, 240.
    expect(table).toContain("| send latency p50 / p95 (ms) | 200 / 290 | 200 / 290 | 300 / 390 | 150 / 240 |");
    expect(table).toContain("| operations accepted / sent | 2 / 2 | 2 / 2 | 2 / 2 | 2 / 2 |");
    expect(table).toContain("| node requests per op: all (estimate / send / bundle / receipt / shared) | 1 (0 / 1 / 0 / 0 / 0) |");
  });

  it("takes the median of a field over the runs that have it: a phase without requests in one run", () => {
    const runs = [{ byPhase: { send: 1, receipt: 0.5 } }, { byPhase: { send: 3 } }, { byPhase: { send: 2, receipt: 1.5 } }];
    expect(medianOf(runs)).toEqual({ byPhase: { send: 2, receipt: 1 } });
  });

  it("offers operations open-loop: the i-th, taking the accounts in turn, due at i / rate seconds", () => {
    const due = openLoopSchedule([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]], 4);
    expect(Object.fromEntries(due)).toEqual({ a1: 0, b1: 250, c1: 500, a2: 750, c2: 1_000, a3: 1_250 });
  });

  it("stops the service and anvil when interrupted", { timeout: 120_000 }, async () => {
    const { child, done } = runBench([
      "--ops",
      "4",
      "--accounts",
      "2",
      "--out",
      join(outDir, "interrupted"),
    ]);
    let stderr = "";
    const pids = await new Promise<number[]>((resolve) => {
      child.stderr!.on("data", (chunk) => {
        stderr += chunk;
        const anvil = /anvil pid (\d+)/.exec(stderr)?.[1];
        const service = /service: pid (\d+)/.exec(stderr)?.[1];
        if (anvil && service) resolve([Number(anvil), Number(service)]);
      });
    });
    for (const pid of pids) expect(alive(pid)).toBe(true);
    child.kill("SIGINT");
    const { code } = await done;
    expect(code).toBe(130);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(existsSync(join(outDir, "interrupted"))).toBe(false);
  });

  it.each([
    [["--version", "1.0"], '--version must be 0.6, 0.7, 0.8 or 0.9, got "1.0"'],
    [["--ops", "2", "--accounts", "3"], "--accounts (3) must not exceed --ops (2)"],
    [["--rate", "0"], '--rate must be an integer of at least 1, got "0"'],
  ])("refuses %j naming the flag (pnpm bench prints it with the usage and exits 2)", (argv, message) => {
    expect(() => parseLoadOptions(argv)).toThrow(new UsageError(message));
  });
});
