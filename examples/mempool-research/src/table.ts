import { type ExperimentReport, formatNumber } from "./experiment.ts";
import type { Interval } from "./statistics.ts";

/** A count of operations: whole, or to one decimal where a median or percentile falls between two. */
function formatCount(value: number): string {
  const tenths = Math.round(value * 10) / 10;
  return Number.isInteger(tenths) ? String(tenths) : tenths.toFixed(1);
}

/** `median [low, high]`; counts of operations as counts. */
function withInterval({ median, low, high }: Interval, unit = ""): string {
  if (Number.isNaN(median)) return "–";
  const format = unit === "operations" ? formatCount : formatNumber;
  return `${format(median)} [${format(low)}, ${format(high)}]`;
}

/** `+median% [+low, +high]`: a change relative to the baseline. */
function change({ median, low, high }: Interval): string {
  if (Number.isNaN(median)) return "–";
  const signed = (v: number) => `${v > 0 ? "+" : ""}${formatNumber(v)}`;
  return `${signed(median)}% [${signed(low)}, ${signed(high)}]`;
}

/** Rows of cells as aligned columns. */
function columns(rows: readonly (readonly string[])[], indent = ""): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map(
      (row) =>
        indent +
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join("  ")
          .trimEnd(),
    )
    .join("\n");
}

/**
 * The report as people read it in a terminal: the workload, one row per policy (medians over the
 * seeds with 95% intervals; revenue relative to the baseline), the refusals and drops by reason,
 * and the verdicts.
 */
export function formatReport(report: ExperimentReport): string {
  const { workload, baseline } = report;
  const base = report.policies.find((p) => p.name === baseline)!;
  const gasPerSecond = (gas: number) => `${formatNumber(gas / 1e6)}M gas/s`;
  const header = [
    report.title,
    `offered ${gasPerSecond(workload.offeredGasPerSecond)} of operation gas limits against ${gasPerSecond(workload.blockGasPerSecond)} of blocks (load ${workload.load}); ${workload.operations} operations per workload; ${report.pacing ? "senders wait for room (pacing)" : "no pacing"}`,
    `medians over ${workload.seeds.length} workload${workload.seeds.length === 1 ? "" : "s"}, [95% intervals] (${report.statistics.bootstrap} bootstrap resamples); revenue against ${baseline}'s ${formatNumber(base.metrics.revenueGwei!.median)} gwei and ${formatNumber(base.metrics.revenuePerGasGwei!.median)} gwei per gas`,
  ];
  const rows = [
    [
      "policy",
      "included %",
      "refused",
      "dropped",
      "latency p50 (s)",
      "latency p95 (s)",
      "fairness (Jain)",
      `net revenue vs ${baseline}`,
      `revenue per gas vs ${baseline}`,
    ],
    ...report.policies.map((p) => [
      p.name,
      withInterval(p.metrics.inclusion!),
      withInterval(p.metrics.refused!, "operations"),
      withInterval(p.metrics.dropped!, "operations"),
      withInterval(p.metrics.latencyP50Seconds!),
      withInterval(p.metrics.latencyP95Seconds!),
      withInterval(p.metrics.fairness!),
      p.versusBaseline ? change(p.versusBaseline.revenueGwei!) : "baseline",
      p.versusBaseline ? change(p.versusBaseline.revenuePerGasGwei!) : "baseline",
    ]),
  ];
  const byReason = report.metrics.filter((m) => !m.headline);
  const reasonRows = [
    ["refused or dropped, by reason", ...report.policies.map((p) => p.name)],
    ...byReason
      .filter((m) => report.policies.some((p) => p.metrics[m.key]!.perSeed.some((v) => v > 0)))
      .map((m) => [
        m.label,
        ...report.policies.map((p) => withInterval(p.metrics[m.key]!, m.unit)),
      ]),
  ];
  const unsettled = report.policies.filter((p) => p.metrics.unsettled!.median > 0);
  const sections = [
    header.join("\n"),
    columns(rows),
    reasonRows.length > 1 ? columns(reasonRows) : "refused or dropped: none",
    ...(unsettled.length > 0
      ? [
          `unsettled at the end (still pooled, or held back by their sender): ${unsettled.map((p) => `${p.name} ${withInterval(p.metrics.unsettled!, "operations")}`).join(", ")}`,
        ]
      : []),
    report.verdicts.length > 0
      ? `Differences from ${baseline} beyond their 95% intervals:\n${report.verdicts.map((v) => `  ${v.text}`).join("\n")}`
      : `No difference from ${baseline} beyond the 95% intervals: more seeds or operations, or a scenario that loads the chain, may tell them apart.`,
  ];
  return `${sections.join("\n\n")}\n`;
}
