import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

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
  it("records every metric of a small run with the command and the machine", {
    timeout: 180_000,
  }, async () => {
    const args = ["--ops", "4", "--accounts", "2", "--runs", "2", "--out", outDir];
    const { code, stdout, stderr } = await runBench(args).done;
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("accepted ops/s");

    const file = join(outDir, "load-v0.7-4ops-2accounts.json");
    const report = JSON.parse(readFileSync(file, "utf8"));
    expect(report.command).toBe(
      `node --experimental-strip-types --no-warnings bench/load.ts ${args.join(" ")}`,
    );
    expect(Date.now() - Date.parse(report.date)).toBeLessThan(180_000);
    expect(report.machine.cores).toBe(os.cpus().length);
    expect(report.machine.node).toBe(process.version);
    expect(report.parameters).toMatchObject({
      ops: 4,
      accounts: 2,
      version: "0.7",
      concurrency: 2,
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
    for (const latency of [r.sendLatencyMs, r.timeToReceiptMs]) {
      expect(latency.count).toBe(4);
      expect(latency.p50).toBeGreaterThan(0);
      expect(latency.p95).toBeGreaterThanOrEqual(latency.p50);
      expect(latency.max).toBeGreaterThanOrEqual(latency.p95);
    }
    // An operation is on chain only after the service accepted it.
    expect(r.timeToReceiptMs.p50).toBeGreaterThan(r.sendLatencyMs.p50);
    expect(r.cpuSeconds.service).toBeGreaterThan(0);
    expect(r.cpuSeconds.anvil).toBeGreaterThan(0);
    expect(r.serviceCpuSecondsPerOp).toBeGreaterThan(0);
    expect(r.serviceCpuSecondsPerOp).toBeLessThan(r.totalSeconds * os.cpus().length);

    const summary = readFileSync(join(outDir, "load-v0.7-4ops-2accounts.md"), "utf8");
    expect(summary).toContain(report.command);
    expect(summary).toContain("time to receipt p50 / p95 (ms)");
    expect(summary).toContain("| metric | median | run 1 | run 2 |");
  });

  it("offers load open-loop at a fixed rate on a devnet with a block time", { timeout: 180_000 }, async () => {
    const out = join(outDir, "rate");
    const args = ["--ops", "6", "--accounts", "3", "--rate", "4", "--block-time", "1", "--out", out];
    const { code, stderr } = await runBench(args).done;
    expect(code, stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(out, "load-v0.7-6ops-3accounts.json"), "utf8"));
    expect(report.parameters).toMatchObject({ rate: 4, blockTime: 1 });
    expect(report.results).toMatchObject({ accepted: 6, includedSuccessfully: 6, errors: [] });
    // Six operations offered at 4 per second take at least 1.25 s to send.
    expect(report.results.sendingSeconds).toBeGreaterThanOrEqual(1.25);
    // With a block a second, nothing is on chain sooner than the next block could hold it.
    expect(report.results.timeToReceiptMs.max).toBeGreaterThan(report.results.sendLatencyMs.max);
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

  it("rejects an unknown EntryPoint version naming the flag", async () => {
    const { code, stderr } = await runBench(["--version", "0.9"]).done;
    expect(code).toBe(2);
    expect(stderr).toContain('--version must be 0.6, 0.7 or 0.8, got "0.9"');
  });
});
