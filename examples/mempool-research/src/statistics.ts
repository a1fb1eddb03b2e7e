import { seededRandom } from "@bundlekit/core/simulation";
import type { OperationOutcomes } from "./replay.ts";

/** A median with a 95% interval. */
export interface Interval {
  median: number;
  low: number;
  high: number;
}

/** A metric of one policy over the seeds: the median of the per-seed values, its 95% interval, and the values. */
export interface MetricSummary extends Interval {
  perSeed: number[];
}

/** How a metric compares with the baseline's: a difference in its own unit, or a relative change in percent. */
export type Comparison = "difference" | "ratio";

/** One measure of a replay, as the report and the table name it. */
export interface Metric {
  key: string;
  label: string;
  /** Its unit, as printed after a value ("s", "%", "gwei", "operations"); "" for an index. */
  unit: string;
  compare: Comparison;
  /** True for the metrics a verdict line may be about; the counts by reason are not. */
  headline: boolean;
}

/** One replay's outcomes, ready to be measured again and again on resampled operations. */
export interface RunData {
  outcomes: OperationOutcomes;
  /** The sender of each operation. */
  senders: Int32Array;
  senderCount: number;
  /** The included operations, by latency. */
  byLatency: Int32Array;
  /** This run's reason indices in the experiment's list of reasons. */
  reasonIds: Int32Array;
}

/** A headline metric. */
const headline = (
  key: string,
  label: string,
  unit: string,
  compare: Comparison = "difference",
): Metric => ({ key, label, unit, compare, headline: true });

/** The metrics every experiment reports, before the counts by reason. */
export const headlineMetrics: readonly Metric[] = [
  headline("inclusion", "inclusion", "%"),
  headline("refused", "refused", "operations"),
  headline("dropped", "dropped", "operations"),
  headline("unsettled", "unsettled", "operations"),
  headline("latencyP50Seconds", "latency p50", "s"),
  headline("latencyP95Seconds", "latency p95", "s"),
  headline("fairness", "fairness (Jain)", ""),
  headline("revenueGwei", "net revenue", "gwei", "ratio"),
  headline("revenuePerGasGwei", "net revenue per gas", "gwei", "ratio"),
];

/** The metrics of an experiment whose runs saw `reasons`: the headline ones, then refused and dropped counts per reason. */
export function metricsFor(reasons: readonly string[]): Metric[] {
  const count =
    (fate: "refused" | "dropped") =>
    (reason: string): Metric => ({
      key: `${fate}: ${reason}`,
      label: `${fate}: ${reason}`,
      unit: "operations",
      compare: "difference",
      headline: false,
    });
  return [...headlineMetrics, ...reasons.map(count("refused")), ...reasons.map(count("dropped"))];
}

/** A replay's outcomes prepared for measuring; `reasons` is the experiment's list, which this run's reasons join. */
export function prepareRun(
  outcomes: OperationOutcomes,
  senderOf: (index: number) => number,
  reasons: string[],
): RunData {
  const total = outcomes.kind.length;
  const senders = new Int32Array(total);
  let senderCount = 0;
  const included: number[] = [];
  for (let i = 0; i < total; i++) {
    senders[i] = senderOf(i);
    senderCount = Math.max(senderCount, senders[i]! + 1);
    if (outcomes.kind[i] === 2) included.push(i);
  }
  included.sort((a, b) => outcomes.latencySeconds[a]! - outcomes.latencySeconds[b]!);
  const reasonIds = Int32Array.from(outcomes.reasons, (reason) => {
    const known = reasons.indexOf(reason);
    return known >= 0 ? known : reasons.push(reason) - 1;
  });
  return { outcomes, senders, senderCount, byLatency: Int32Array.from(included), reasonIds };
}

/**
 * Every metric of `run` (in the order of `metricsFor(reasons)`), counting the operations of
 * sender `s` `senderWeights[s]` times (a bootstrap resample), or once each without weights.
 */
export function measure(
  run: RunData,
  reasonCount: number,
  senderWeights?: Uint32Array,
): Float64Array {
  const { outcomes, senders, byLatency } = run;
  const w = (i: number) => (senderWeights ? senderWeights[senders[i]!]! : 1);
  const values = new Float64Array(headlineMetrics.length + 2 * reasonCount);
  let offered = 0;
  const counts = [0, 0, 0, 0];
  let net = -outcomes.unattributedCostWei;
  let gas = 0;
  const refusedAt = headlineMetrics.length;
  const droppedAt = refusedAt + reasonCount;
  for (let i = 0; i < outcomes.kind.length; i++) {
    const weight = w(i);
    if (weight === 0) continue;
    offered += weight;
    const kind = outcomes.kind[i]!;
    counts[kind]! += weight;
    if (kind === 1) values[refusedAt + run.reasonIds[outcomes.reason[i]!]!]! += weight;
    else if (kind === 3) values[droppedAt + run.reasonIds[outcomes.reason[i]!]!]! += weight;
    else if (kind === 2) {
      net += weight * (outcomes.earnedWei[i]! - outcomes.costWei[i]!);
      gas += weight * outcomes.gasUsed[i]!;
    }
  }
  // Latency quantiles and fairness, over the included operations with their weights.
  let included = 0;
  for (const i of byLatency) included += w(i);
  const quantile = (q: number) => {
    const rank = Math.max(1, Math.ceil(q * included));
    let seen = 0;
    for (const i of byLatency) {
      seen += w(i);
      if (seen >= rank) return outcomes.latencySeconds[i]!;
    }
    return Number.NaN;
  };
  const sums = new Float64Array(run.senderCount);
  const numbers = new Float64Array(run.senderCount);
  for (const i of byLatency) {
    const weight = w(i);
    sums[senders[i]!]! += weight * outcomes.latencySeconds[i]!;
    numbers[senders[i]!]! += weight;
  }
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let s = 0; s < run.senderCount; s++) {
    if (numbers[s] === 0) continue;
    const mean = sums[s]! / numbers[s]!;
    sum += mean;
    squares += mean * mean;
    n++;
  }
  values.set([
    offered === 0 ? Number.NaN : (100 * counts[2]!) / offered,
    counts[1]!,
    counts[3]!,
    counts[0]!,
    included === 0 ? Number.NaN : quantile(0.5),
    included === 0 ? Number.NaN : quantile(0.95),
    n === 0 ? Number.NaN : squares === 0 ? 1 : (sum * sum) / (n * squares),
    net / 1e9,
    gas === 0 ? Number.NaN : net / gas / 1e9,
  ]);
  return values;
}

/** The median of the numbers in `values` that are not NaN; NaN when there are none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The `q` quantile of `sorted` (ascending, no NaN), interpolating between neighbours. */
function quantileOf(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

/** A comparison of `value` with the baseline's `base`: their difference, or `value` relative to `base` in percent. */
export function compare(how: Comparison, value: number, base: number): number {
  if (how === "difference") return value - base;
  return base === 0 ? Number.NaN : (value / base - 1) * 100;
}

export interface BootstrapParameters {
  /** `runs[policy][seed]`: every policy replayed every seed's workload. */
  runs: readonly (readonly RunData[])[];
  metrics: readonly Metric[];
  reasonCount: number;
  /** Index of the baseline policy in `runs`. */
  baseline: number;
  /** Bootstrap resamples. */
  replicates: number;
  /** Seed of the resampling. */
  seed: number;
}

export interface BootstrapResult {
  /** Per policy, per metric key. */
  summaries: Record<string, MetricSummary>[];
  /** Per policy, per metric key: the policy against the baseline (undefined for the baseline itself). */
  versusBaseline: (Record<string, Interval> | undefined)[];
}

/**
 * Medians over the seeds, with 95% intervals from a two-level bootstrap: each resample draws the
 * seeds with replacement, then within each drawn seed its workload's senders with replacement,
 * each with all its operations (a sender's operations are not independent: they queue behind one
 * another, and fairness is a measure over senders). Every policy is measured on the same
 * resample, so comparisons with the baseline are paired (same workloads, same senders). The
 * interval is the 2.5th to 97.5th percentile of the resampled statistic. Seeded: the same runs
 * and seed give the same intervals.
 */
export function bootstrap({
  runs,
  metrics,
  reasonCount,
  baseline,
  replicates,
  seed,
}: BootstrapParameters): BootstrapResult {
  const random = seededRandom(seed);
  const policies = runs.length;
  const seeds = runs[0]!.length;
  const metricCount = metrics.length;
  const point = runs.map((perSeed) => perSeed.map((run) => measure(run, reasonCount)));
  /** Per policy and metric, the resampled statistic; per policy and metric, the resampled comparison. */
  const statistics = runs.map(() => metrics.map(() => [] as number[]));
  const comparisons = runs.map(() => metrics.map(() => [] as number[]));
  const sizes = runs[0]!.map((run) => run.senderCount);
  for (let r = 0; r < replicates; r++) {
    const picks = Array.from({ length: seeds }, () => random.int(seeds));
    const measured = runs.map(() => [] as Float64Array[]);
    for (const s of picks) {
      const weights = new Uint32Array(sizes[s]!);
      for (let k = 0; k < weights.length; k++) weights[random.int(weights.length)]!++;
      for (let p = 0; p < policies; p++)
        measured[p]!.push(measure(runs[p]![s]!, reasonCount, weights));
    }
    for (let p = 0; p < policies; p++) {
      for (let m = 0; m < metricCount; m++) {
        const values = measured[p]!.map((v) => v[m]!);
        statistics[p]![m]!.push(median(values));
        if (p !== baseline)
          comparisons[p]![m]!.push(
            median(
              values.map((v, j) => compare(metrics[m]!.compare, v, measured[baseline]![j]![m]!)),
            ),
          );
      }
    }
  }
  const interval = (values: number[], centre: number): Interval => {
    const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
    return { median: centre, low: quantileOf(sorted, 0.025), high: quantileOf(sorted, 0.975) };
  };
  const summaries = runs.map((_, p) =>
    Object.fromEntries(
      metrics.map((metric, m) => {
        const perSeed = point[p]!.map((v) => v[m]!);
        return [metric.key, { ...interval(statistics[p]![m]!, median(perSeed)), perSeed }];
      }),
    ),
  );
  const versusBaseline = runs.map((_, p) =>
    p === baseline
      ? undefined
      : Object.fromEntries(
          metrics.map((metric, m) => {
            const perSeed = point[p]!.map((v, j) =>
              compare(metric.compare, v[m]!, point[baseline]![j]![m]!),
            );
            return [metric.key, interval(comparisons[p]![m]!, median(perSeed))];
          }),
        ),
  );
  return { summaries, versusBaseline };
}
