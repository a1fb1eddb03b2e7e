import { describe, expect, it } from "vitest";
import { runExperiment } from "../src/experiment.ts";
import { builtInPolicy } from "../src/policies.ts";
import type { OperationOutcomes } from "../src/replay.ts";
import { scenarios } from "../src/scenarios.ts";
import { bootstrap, headlineMetrics, measure, metricsFor, prepareRun } from "../src/statistics.ts";
import { formatReport } from "../src/table.ts";
import { generateWorkload } from "../src/workload.ts";

/** Outcomes of `latencies.length` included operations, one sender each, with these latencies and what each earned. */
function included(latencies: readonly number[], earnedGwei = 100): OperationOutcomes {
  const total = latencies.length;
  return {
    kind: new Uint8Array(total).fill(2),
    reason: new Int32Array(total).fill(-1),
    reasons: [],
    latencySeconds: Float64Array.from(latencies),
    earnedWei: new Float64Array(total).fill(earnedGwei * 1e9),
    costWei: new Float64Array(total).fill(50e9),
    gasUsed: new Float64Array(total).fill(100_000),
    unattributedCostWei: 0,
  };
}

describe("statistics that decide", () => {
  const seeds = 3;
  const latencies = (shift: number, seed: number) =>
    Array.from({ length: 60 }, (_, i) => 1 + ((i * 7 + seed) % 10) / 10 + shift);
  const runsOf = (shift: number, earned = 100) =>
    Array.from({ length: seeds }, (_, s) =>
      prepareRun(included(latencies(shift, s), earned), (i) => i, []),
    );
  const metrics = metricsFor([]);
  const at = (key: string) => headlineMetrics.findIndex((m) => m.key === key);

  it("measures latency quantiles, fairness and revenue per operation, and counts a resample's senders as often as drawn", () => {
    const run = prepareRun(included([1, 2, 3, 4]), (i) => (i < 2 ? 0 : 1), []);
    const all = measure(run, 0);
    expect(all[at("latencyP50Seconds")]).toBe(2);
    expect(all[at("inclusion")]).toBe(100);
    // Senders' mean latencies 1.5 and 3.5: Jain = 25 / (2 × 14.5).
    expect(all[at("fairness")]).toBeCloseTo(25 / 29, 10);
    expect(all[at("revenueGwei")]).toBeCloseTo(4 * 50, 6);
    expect(all[at("revenuePerGasGwei")]).toBeCloseTo(50 / 100_000, 12);
    // Sender 1 drawn twice, sender 0 not at all.
    const resampled = measure(run, 0, Uint32Array.from([0, 2]));
    expect(resampled[at("latencyP50Seconds")]).toBe(3);
    expect(resampled[at("fairness")]).toBe(1);
    expect(resampled[at("revenueGwei")]).toBeCloseTo(4 * 50, 6);
  });

  it("gives the same intervals for the same seed, each around its median; a policy against itself differs by nothing", () => {
    const runs = [runsOf(0), runsOf(0)];
    const once = bootstrap({
      runs,
      metrics,
      reasonCount: 0,
      baseline: 0,
      replicates: 300,
      seed: 5,
    });
    expect(
      bootstrap({ runs, metrics, reasonCount: 0, baseline: 0, replicates: 300, seed: 5 }),
    ).toEqual(once);
    const p50 = once.summaries[0]!.latencyP50Seconds!;
    expect(p50.low).toBeLessThanOrEqual(p50.median);
    expect(p50.high).toBeGreaterThanOrEqual(p50.median);
    expect(p50.high).toBeGreaterThan(p50.low);
    expect(once.versusBaseline[0]).toBeUndefined();
    expect(once.versusBaseline[1]!.latencyP50Seconds).toEqual({ median: 0, low: 0, high: 0 });
    expect(once.versusBaseline[1]!.revenueGwei).toEqual({ median: 0, low: 0, high: 0 });
  });

  it("pairs the comparison with the baseline: a shift of half a second and 10% more revenue are told with intervals that exclude zero", () => {
    const { versusBaseline } = bootstrap({
      runs: [runsOf(0), runsOf(0.5, 110)],
      metrics,
      reasonCount: 0,
      baseline: 0,
      replicates: 300,
      seed: 1,
    });
    const latency = versusBaseline[1]!.latencyP50Seconds!;
    expect(latency.median).toBeCloseTo(0.5, 10);
    expect(latency.low).toBeGreaterThan(0.3);
    expect(latency.high).toBeLessThan(0.7);
    // (110 − 50) / (100 − 50) − 1: net revenue 20% higher.
    expect(versusBaseline[1]!.revenueGwei!.median).toBeCloseTo(20, 6);
    expect(versusBaseline[1]!.revenueGwei!.low).toBeGreaterThan(0);
  });

  it("on the congestion scenario, tells fifo from default beyond their intervals, and says so in a verdict", async () => {
    const { workload, chain, settings } = scenarios.congestion;
    const report = await runExperiment({
      policies: [builtInPolicy("default"), builtInPolicy("fifo")],
      workloads: [1, 2, 3].map((seed) => ({
        seed,
        workload: generateWorkload({ ops: 300, seed, ...workload }),
      })),
      description: "congestion, small",
      replay: { ...chain, settings },
      bootstrap: 400,
    });
    expect(report.title).toBe("congestion, small; seeds 1–3; baseline default");
    expect(report.workload.load).toBeGreaterThan(1);
    expect(report.runs.map((r) => [r.policy, r.seed])).toEqual([
      ["default", 1],
      ["default", 2],
      ["default", 3],
      ["fifo", 1],
      ["fifo", 2],
      ["fifo", 3],
    ]);
    // Arrival order serves every sender alike; the highest fee first makes low bidders wait.
    const [base, fifo] = report.policies as [
      (typeof report.policies)[0],
      (typeof report.policies)[0],
    ];
    expect(fifo.metrics.fairness!.low).toBeGreaterThan(base.metrics.fairness!.high);
    const verdict = report.verdicts.find((v) => v.metric === "fairness");
    expect(verdict).toMatchObject({ policy: "fifo", baseline: "default", disjoint: true });
    expect(verdict!.text).toMatch(
      /^fifo vs default: fairness \(Jain\) higher, \+0\.\d+ \(95% interval \+0\.\d+ to \+0\.\d+\); the two intervals do not overlap$/,
    );
    for (const policy of report.policies) {
      for (const metric of headlineMetrics) {
        const { median, low, high, perSeed } = policy.metrics[metric.key]!;
        expect(perSeed).toHaveLength(3);
        if (!Number.isNaN(median)) expect([low <= median, median <= high]).toEqual([true, true]);
      }
    }
    const table = formatReport(report);
    expect(table).toMatch(/^default +\d+(\.\d+)? \[/m);
    expect(table).toMatch(/^fifo +\d+(\.\d+)? \[/m);
    expect(table).toContain(verdict!.text);
  });
});
