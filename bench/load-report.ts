/** What one run of bench/load.ts measured, and the summary table it prints and records. */
import type { ServiceProcess } from "@bundlekit/server";
import type { Hash } from "viem";
import type { SignedOperation } from "./accounts.ts";
import type { LoadOptions } from "./load-options.ts";
import type { MachineFacts } from "./run-facts.ts";
import { type Distribution, distribution } from "./stats.ts";

/** One operation's life as the load generator saw it; times in ms from the start of sending. */
export interface OpRecord extends SignedOperation {
  sentAt?: number;
  acceptedAt?: number;
  error?: string;
  includedAt?: number;
  success?: boolean;
  transactionHash?: Hash;
}

export interface RunMeasurements {
  sendingMs: number;
  totalMs: number;
  timedOut: boolean;
  cpuSeconds: { service: number | undefined; anvil: number | undefined; loadGenerator: number };
  /** The service's CPU seconds per second while idle (bundling timer only), measured just before the load. */
  serviceIdleCpuPerSecond: number | undefined;
}

export type RunResults = ReturnType<typeof summarise>;

/** The metrics of one run. */
export function summarise(
  records: OpRecord[],
  run: RunMeasurements,
  service: Pick<ServiceProcess, "logCounts">,
) {
  const sent = records.filter((r) => r.sentAt !== undefined);
  const accepted = records.filter((r) => r.acceptedAt !== undefined);
  const included = accepted.filter((r) => r.includedAt !== undefined);
  const errors = new Map<string, number>();
  for (const r of records) if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
  const bundles = new Set(included.map((r) => r.transactionHash));
  const lastAccepted = Math.max(0, ...accepted.map((r) => r.acceptedAt!));
  const lastIncluded = Math.max(0, ...included.map((r) => r.includedAt!));
  const perSecond = (count: number, ms: number) =>
    ms > 0 ? Math.round((count / ms) * 1000 * 10) / 10 : 0;
  const cpu = run.cpuSeconds;
  return {
    sent: sent.length,
    accepted: accepted.length,
    rejected: sent.length - accepted.length,
    notSent: records.length - sent.length,
    included: included.length,
    includedSuccessfully: included.filter((r) => r.success).length,
    notIncludedBeforeTimeout: accepted.length - included.length,
    bundles: bundles.size,
    opsPerBundle: bundles.size > 0 ? Math.round((included.length / bundles.size) * 10) / 10 : 0,
    sendingSeconds: Math.round(run.sendingMs) / 1000,
    totalSeconds: Math.round(run.totalMs) / 1000,
    acceptedOpsPerSecond: perSecond(accepted.length, lastAccepted),
    includedOpsPerSecond: perSecond(included.length, lastIncluded),
    sendLatencyMs: distribution(
      accepted.map((r) => r.acceptedAt! - r.sentAt!),
    ) satisfies Distribution,
    timeToReceiptMs: distribution(
      included.map((r) => r.includedAt! - r.sentAt!),
    ) satisfies Distribution,
    cpuSeconds: cpu,
    serviceCpuSecondsPerOp:
      cpu.service === undefined || accepted.length === 0
        ? undefined
        : Math.round((cpu.service / accepted.length) * 1e5) / 1e5,
    serviceIdleCpuPerSecond: run.serviceIdleCpuPerSecond,
    serviceCpuUtilisation:
      cpu.service === undefined
        ? undefined
        : Math.round((cpu.service / (run.totalMs / 1000)) * 100) / 100,
    serviceLogLines: { ...service.logCounts },
    errors: [...errors].map(([message, count]) => ({ message, count })),
  };
}

export interface Report {
  date: string;
  command: string;
  commit: string | undefined;
  machine: MachineFacts;
  parameters: Omit<LoadOptions, "out"> & Record<string, unknown>;
  results: RunResults;
  runs: RunResults[];
}

/** A markdown table of the metrics: the medians, and each run's value when there were several. */
export function summaryTable(report: Report): string {
  const ms = (d: Distribution) => `${d.p50 ?? "-"} / ${d.p95 ?? "-"}`;
  const rows: [string, (r: RunResults) => string][] = [
    ["operations accepted / sent", (r) => `${r.accepted} / ${r.sent}`],
    ["included (successful)", (r) => `${r.included} (${r.includedSuccessfully})`],
    ["bundles, ops per bundle", (r) => `${r.bundles}, ${r.opsPerBundle}`],
    ["accepted ops/s", (r) => String(r.acceptedOpsPerSecond)],
    ["included ops/s", (r) => String(r.includedOpsPerSecond)],
    ["send latency p50 / p95 (ms)", (r) => ms(r.sendLatencyMs)],
    ["time to receipt p50 / p95 (ms)", (r) => ms(r.timeToReceiptMs)],
    ["service CPU s per op", (r) => String(r.serviceCpuSecondsPerOp ?? "-")],
    [
      "service CPU s per s: under load / idle",
      (r) => `${r.serviceCpuUtilisation ?? "-"} / ${r.serviceIdleCpuPerSecond ?? "-"}`,
    ],
    [
      "CPU s: service / anvil / load generator",
      (r) =>
        `${r.cpuSeconds.service ?? "-"} / ${r.cpuSeconds.anvil ?? "-"} / ${r.cpuSeconds.loadGenerator}`,
    ],
    ["wall s: sending / total", (r) => `${r.sendingSeconds} / ${r.totalSeconds}`],
  ];
  const columns = report.runs.length > 1 ? [report.results, ...report.runs] : [report.results];
  const header =
    report.runs.length > 1 ? ["median", ...report.runs.map((_, i) => `run ${i + 1}`)] : ["value"];
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const errors = report.results.errors;
  const p = report.parameters;
  return [
    line(["metric", ...header]),
    line(["---", ...header.map(() => "---")]),
    ...rows.map(([name, value]) => line([name, ...columns.map(value)])),
    ...(errors.length > 0
      ? ["", `Errors: ${errors.map((e) => `${e.count}x ${e.message}`).join("; ")}`]
      : []),
    "",
    `\`${report.command}\` — EntryPoint v${p.version}, ${p.ops} ops from ${p.accounts} accounts, ` +
      `${p.rate === undefined ? `concurrency ${p.concurrency}` : `offered at ${p.rate} ops/s`}, ` +
      `${p.blockTime === undefined ? "a block per transaction" : `a block every ${p.blockTime} s`}, ${p.relayers} relayers, ` +
      `bundleInterval ${p.bundleInterval ?? "default"}${p.bundleInterval === undefined ? "" : " ms"}, bundleSize ${p.bundleSize ?? "default"}; ` +
      `${report.machine.cores} cores, Node ${report.machine.node}, ${report.date.slice(0, 10)}`,
  ].join("\n");
}
