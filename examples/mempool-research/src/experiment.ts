import type { BundlerSettingsInput } from "@bundlekit/core";
import {
  type PolicyReport,
  type PolicySource,
  type ReplayOptions,
  replay,
  replaySettings,
} from "./replay.ts";
import {
  bootstrap,
  type Interval,
  type Metric,
  type MetricSummary,
  metricsFor,
  prepareRun,
  type RunData,
} from "./statistics.ts";
import type { Workload } from "./workload.ts";

/** A policy to compare: its name in the report, where it came from, and how to make it. */
export interface PolicyEntry {
  name: string;
  /** "built-in", or the file it was loaded from. */
  source: string;
  make: PolicySource;
}

/** One workload of an experiment, and the seed it was generated from (none for a file). */
export interface SeededWorkload {
  seed: number | undefined;
  workload: Workload;
}

export interface ExperimentParameters {
  policies: readonly PolicyEntry[];
  /** The policy the others are compared with. Default: the first. */
  baseline?: string;
  /** The workloads each policy replays: one per seed. */
  workloads: readonly SeededWorkload[];
  /** What the workloads are, for titles: e.g. "congestion: 400 ops, 50/s …". */
  description: string;
  /** The chain, the engine settings and pacing of every replay. */
  replay?: Omit<ReplayOptions, "onProgress">;
  /** Bootstrap resamples for the intervals. Default 1000, fewer for very large experiments (at least 200). */
  bootstrap?: number;
  /** Seed of the bootstrap. Default 1. */
  statisticsSeed?: number;
  /** Called as replays progress: the policy, the replay's number (from 1) of all, and the share of its workload replayed. */
  onProgress?: (progress: { policy: string; run: number; runs: number; share: number }) => void;
}

/** A policy's line in the report. */
export interface PolicyResult {
  name: string;
  source: string;
  /** Per metric key (`inclusion`, `latencyP95Seconds`, `refused: <reason>`, …): median over seeds and 95% interval. */
  metrics: Record<string, MetricSummary>;
  /** Per metric key, this policy against the baseline, paired by seed and sender: a difference, or a change in percent (`Metric.compare`); absent for the baseline. */
  versusBaseline?: Record<string, Interval>;
  /** The 0th, 1st, … 100th percentile of the included operations' latency, seconds, all seeds pooled: the latency distribution. */
  latencyPercentilesSeconds: number[];
}

/** A difference from the baseline whose 95% interval excludes zero. */
export interface Verdict {
  policy: string;
  baseline: string;
  metric: string;
  /** The difference (or change in percent), with its interval. */
  difference: Interval;
  /** True when the two policies' own intervals do not overlap either. */
  disjoint: boolean;
  text: string;
}

/** What `pnpm research` writes to report.json. */
export interface ExperimentReport {
  title: string;
  workload: {
    description: string;
    seeds: (number | null)[];
    operations: number;
    /** The operations' gas limits offered per second, against what blocks hold per second: above 1 is congestion. */
    offeredGasPerSecond: number;
    blockGasPerSecond: number;
    load: number;
  };
  chain: {
    blockTimeMs: number;
    blockGasLimit: string;
    initialBaseFee: string;
    entryPointVersion: string;
  };
  /** The engine settings of every replay, over the defaults (amounts in wei and gas as strings). */
  settings: BundlerSettingsInput;
  pacing: boolean;
  baseline: string;
  statistics: { confidence: 0.95; bootstrap: number; seed: number; method: string };
  metrics: Metric[];
  /** In the order given, the order of the table and the charts. */
  policies: PolicyResult[];
  verdicts: Verdict[];
  /** Every replay's own figures, policy by policy, seed by seed. */
  runs: (Omit<PolicyReport, "outcomes"> & { seed: number | null })[];
}

const method =
  "median over seeds; 95% interval: 2.5th to 97.5th percentile of a two-level bootstrap (seeds drawn with replacement, then each drawn seed's senders with replacement, with all their operations), every policy measured on the same resample, so that comparisons with the baseline are paired";

/** The sum of an operation's gas limits as the lab sends it (verification 80,000, preVerificationGas 60,000, a paymaster's 60,000). */
function offeredGas(workload: Workload): number {
  return workload.operations.reduce(
    (sum, op) =>
      sum + Number(op.callGasLimit) + 140_000 + (op.paymaster === undefined ? 0 : 60_000),
    0,
  );
}

/**
 * Replay every workload with every policy (the same workloads for all), then summarise: per
 * policy, each metric's median over seeds with a 95% interval, and each against the baseline,
 * paired; a verdict for each headline metric whose difference from the baseline excludes zero.
 */
export async function runExperiment(parameters: ExperimentParameters): Promise<ExperimentReport> {
  const { policies, workloads } = parameters;
  if (policies.length === 0) throw new RangeError("an experiment needs at least one policy");
  if (workloads.length === 0) throw new RangeError("an experiment needs at least one workload");
  const names = policies.map((p) => p.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined)
    throw new RangeError(`two policies are named "${duplicate}": give each its own name`);
  const baselineName = parameters.baseline ?? names[0]!;
  const baseline = names.indexOf(baselineName);
  if (baseline < 0)
    throw new RangeError(
      `the baseline "${baselineName}" is not among the policies compared (${names.join(", ")})`,
    );
  const options = parameters.replay ?? {};
  const blockTimeMs = options.blockTimeMs ?? 1_000;
  // Checked once, before any replay: a bad setting is named at once.
  replaySettings(options.settings, blockTimeMs);

  const reasons: string[] = [];
  const runs: RunData[][] = policies.map(() => []);
  const reports: ExperimentReport["runs"] = [];
  const total = policies.length * workloads.length;
  let run = 0;
  for (const [p, policy] of policies.entries()) {
    for (const { seed, workload } of workloads) {
      run++;
      const report = await replay(workload, policy.make, {
        ...options,
        onProgress: (share) =>
          parameters.onProgress?.({ policy: policy.name, run, runs: total, share }),
      });
      const { outcomes, ...figures } = report;
      reports.push({ ...figures, policy: policy.name, seed: seed ?? null });
      runs[p]!.push(prepareRun(outcomes, (i) => workload.operations[i]!.sender, reasons));
    }
  }

  const metrics = metricsFor(reasons);
  const operations = workloads.reduce((sum, w) => sum + w.workload.operations.length, 0);
  const replicates = Math.min(
    parameters.bootstrap ?? 1000,
    Math.max(200, Math.floor(3e8 / (policies.length * operations))),
  );
  const statisticsSeed = parameters.statisticsSeed ?? 1;
  const { summaries, versusBaseline } = bootstrap({
    runs,
    metrics,
    reasonCount: reasons.length,
    baseline,
    replicates,
    seed: statisticsSeed,
  });

  const results: PolicyResult[] = policies.map((policy, p) => ({
    name: policy.name,
    source: policy.source,
    metrics: summaries[p]!,
    ...(versusBaseline[p] ? { versusBaseline: versusBaseline[p] } : {}),
    latencyPercentilesSeconds: percentiles(
      runs[p]!.flatMap((r) => Array.from(r.byLatency, (i) => r.outcomes.latencySeconds[i]!)),
    ),
  }));
  const verdicts = results.flatMap((result, p) =>
    p === baseline
      ? []
      : metrics
          .filter((m) => m.headline)
          .flatMap((metric) => verdictOf(result, results[baseline]!, metric) ?? []),
  );

  const durations = workloads.map(
    ({ workload }) => Math.max(1, workload.operations.at(-1)?.at ?? 0) / 1000,
  );
  const offeredGasPerSecond = Math.round(
    workloads.reduce((sum, w, i) => sum + offeredGas(w.workload) / durations[i]!, 0) /
      workloads.length,
  );
  const blockGasLimit = options.blockGasLimit ?? 30_000_000n;
  const blockGasPerSecond = Math.round(Number(blockGasLimit) / (blockTimeMs / 1000));
  const seeds = workloads.map((w) => w.seed ?? null);
  return {
    title: `${parameters.description}; ${seedsText(seeds)}; baseline ${baselineName}`,
    workload: {
      description: parameters.description,
      seeds,
      operations: Math.round(operations / workloads.length),
      offeredGasPerSecond,
      blockGasPerSecond,
      load: Math.round((offeredGasPerSecond / blockGasPerSecond) * 100) / 100,
    },
    chain: {
      blockTimeMs,
      blockGasLimit: blockGasLimit.toString(),
      initialBaseFee: (options.initialBaseFee ?? 1_000_000_000n).toString(),
      entryPointVersion: options.entryPointVersion ?? "0.7",
    },
    settings: options.settings ?? {},
    pacing: options.pacing !== false,
    baseline: baselineName,
    statistics: { confidence: 0.95, bootstrap: replicates, seed: statisticsSeed, method },
    metrics,
    policies: results,
    verdicts,
    runs: reports,
  };
}

/** The 0th to 100th percentiles of `values` (nearest rank); empty when there are none. */
function percentiles(values: number[]): number[] {
  if (values.length === 0) return [];
  const sorted = values.sort((a, b) => a - b);
  return Array.from(
    { length: 101 },
    (_, q) =>
      sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))]!,
  );
}

/** "seed 7", "seeds 1–5", "seeds 1, 4, 9", or "one workload file". */
export function seedsText(seeds: readonly (number | null)[]): string {
  const known = seeds.filter((s) => s !== null);
  if (known.length === 0) return seeds.length === 1 ? "one workload" : `${seeds.length} workloads`;
  if (known.length === 1) return `seed ${known[0]}`;
  const consecutive = known.every((s, i) => i === 0 || s === known[i - 1]! + 1);
  return consecutive ? `seeds ${known[0]}–${known.at(-1)}` : `seeds ${known.join(", ")}`;
}

/** The verdict on `metric` of `result` against `base`, when the paired difference's interval excludes zero. */
function verdictOf(result: PolicyResult, base: PolicyResult, metric: Metric): Verdict | undefined {
  const difference = result.versusBaseline?.[metric.key];
  if (!difference || Number.isNaN(difference.low) || Number.isNaN(difference.high))
    return undefined;
  if (difference.low <= 0 && difference.high >= 0) return undefined;
  const own = result.metrics[metric.key]!;
  const theirs = base.metrics[metric.key]!;
  const disjoint = own.low > theirs.high || own.high < theirs.low;
  const unit =
    metric.compare === "ratio"
      ? "%"
      : metric.unit === "%"
        ? " points"
        : metric.unit
          ? ` ${metric.unit}`
          : "";
  const signed = (v: number) => `${v > 0 ? "+" : ""}${formatNumber(v)}`;
  const direction = difference.median > 0 ? "higher" : "lower";
  return {
    policy: result.name,
    baseline: base.name,
    metric: metric.key,
    difference,
    disjoint,
    text: `${result.name} vs ${base.name}: ${metric.label} ${direction}, ${signed(difference.median)}${unit} (95% interval ${signed(difference.low)} to ${signed(difference.high)}${unit})${disjoint ? "; the two intervals do not overlap" : ""}`,
  };
}

/** A number with about three significant digits, for tables and verdicts. */
export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "–";
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString("en-US");
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 1 || magnitude === 0) return value.toFixed(2);
  return value.toPrecision(3);
}
