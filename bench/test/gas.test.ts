import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const outDir = mkdtempSync(join(os.tmpdir(), "bundlekit-bench-gas-test-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

interface GasReport {
  summary: { operations: number; failures: number; byWorkload: { workload: string }[]; estimateLatencyMs: { p50: number } };
  samples: { workload: string; gas: Record<string, { limit: string; used: string; ratio: number }> }[];
}

describe("bench/gas.ts", () => {
  it("sends every v0.8 workload with the service's estimate, traces what each phase used, and records it", { timeout: 180_000 }, async () => {
    const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", "bench/gas.ts", "--samples", "1", "--versions", "0.8", "--out", outDir], { cwd: root });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code, stderr).toBe(0);

    const report = JSON.parse(readFileSync(join(outDir, "gas-1samples.json"), "utf8")) as GasReport;
    expect(report.summary.failures).toBe(0);
    expect(report.summary.byWorkload.map((w) => w.workload)).toEqual(
      ["plain transfer", "deploy + transfer", "4 KiB calldata", "16 KiB calldata", "loop of 10", "loop of 1,000", "loop of 10,000", "400,000 gas forwarded (63/64)", "postOp of 300 rounds", "postOp of 3,000 rounds", "EIP-7702 account"].map((w) => `${w} (v0.8)`),
    );
    expect(report.summary.estimateLatencyMs.p50).toBeGreaterThan(0);
    for (const sample of report.samples) {
      // Every phase ran within its limit, and the ratio is what the figures say.
      for (const { limit, used, ratio } of Object.values(sample.gas)) {
        expect(BigInt(limit)).toBeGreaterThanOrEqual(BigInt(used));
        expect(ratio).toBeCloseTo(Number(limit) / Number(used), 2);
      }
      expect(Object.keys(sample.gas)).toEqual(expect.arrayContaining(["verificationGasLimit", "callGasLimit"]));
    }
    const postOp = report.samples.filter((s) => s.workload.startsWith("postOp"));
    expect(postOp.map((s) => Object.keys(s.gas))).toEqual(postOp.map(() => expect.arrayContaining(["paymasterVerificationGasLimit", "paymasterPostOpGasLimit"])));
    expect(readFileSync(join(outDir, "gas-1samples.md"), "utf8")).toContain("| callGasLimit |");
  });
});
