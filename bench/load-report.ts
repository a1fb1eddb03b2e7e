/** What one run of bench/load.ts measured, and the summary table it prints and records. */
import type { ServiceProcess } from "@bundlekit/server";
import type { Hash } from "viem";
import type { SignedOperation } from "./accounts.ts";
import type { LoadOptions } from "./load-options.ts";
import type { NodeRequestCounts, NodeRequestTally } from "./node-requests.ts";
import type { MachineFacts } from "./run-facts.ts";
import { type Distribution, distribution } from "./stats.ts";

/** One operation's life as the load generator saw it; times in ms from the start of sending. */
export interface OpRecord extends SignedOperation {
  /** With `--estimate`: when its `eth_estimateUserOperationGas` was sent and answered. */
  estimateStartedAt?: number;
  estimatedAt?: number;
  sentAt?: number;
  acceptedAt?: number;
  error?: string;
  /** The request that failed was not answered within `--request-timeout`. */
  timedOut?: boolean;
  /** How long each busy refusal (-32005) of this operation's requests took to come back. */
  refusalsMs?: number[];
  includedAt?: number;
  success?: boolean;
  transactionHash?: Hash;
}

export interface RunMeasurements {
  sendingMs: number;
  totalMs: number;
  /** Round trips of `eth_chainId`, sent one at a time while the operations are sent. */
  chainIdMs: number[];
  timedOut: boolean;
  cpuSeconds: { service: number | undefined; anvil: number | undefined; loadGenerator: number };
  /** The service's requests to the node over the window, by phase and method. */
  nodeRequests: NodeRequestTally;
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
    requestTimeouts: records.filter((r) => r.timedOut).length,
    busyRefusals: records.reduce((sum, r) => sum + (r.refusalsMs?.length ?? 0), 0),
    opsRefusedAtLeastOnce: records.filter((r) => r.refusalsMs?.length).length,
    chainIdLatencyMs: distribution(run.chainIdMs) satisfies Distribution,
    refusalLatencyMs: distribution(
      records.flatMap((r) => r.refusalsMs ?? []),
    ) satisfies Distribution,
    bundles: bundles.size,
    opsPerBundle: bundles.size > 0 ? Math.round((included.length / bundles.size) * 10) / 10 : 0,
    sendingSeconds: Math.round(run.sendingMs) / 1000,
    totalSeconds: Math.round(run.totalMs) / 1000,
    acceptedOpsPerSecond: perSecond(accepted.length, lastAccepted),
    includedOpsPerSecond: perSecond(included.length, lastIncluded),
    sendLatencyMs: distribution(
      accepted.map((r) => r.acceptedAt! - r.sentAt!),
    ) satisfies Distribution,
    estimateLatencyMs: distribution(
      records
        .filter((r) => r.estimatedAt !== undefined)
        .map((r) => r.estimatedAt! - r.estimateStartedAt!),
    ) satisfies Distribution,
    timeToReceiptMs: distribution(
      included.map((r) => r.includedAt! - r.sentAt!),
    ) satisfies Distribution,
    cpuSeconds: cpu,
    serviceCpuSecondsPerOp:
      cpu.service === undefined || accepted.length === 0
        ? undefined
        : Math.round((cpu.service / accepted.length) * 1e5) / 1e5,
    /** anvil's CPU over the window per accepted operation. */
    nodeCpuSecondsPerOp:
      cpu.anvil === undefined || accepted.length === 0
        ? undefined
        : Math.round((cpu.anvil / accepted.length) * 1e5) / 1e5,
    /** The service's node requests per accepted operation: in all, by phase, by phase and method. */
    nodeRequestsPerOp: perOperation(run.nodeRequests.counts, accepted.length),
    /** The node's answering time per accepted operation (ms), as nodeRequestsPerOp. */
    nodeMsPerOp: perOperation(run.nodeRequests.milliseconds, accepted.length),
    serviceIdleCpuPerSecond: run.serviceIdleCpuPerSecond,
    serviceCpuUtilisation:
      cpu.service === undefined
        ? undefined
        : Math.round((cpu.service / (run.totalMs / 1000)) * 100) / 100,
    serviceLogLines: { ...service.logCounts },
    errors: [...errors].map(([message, count]) => ({ message, count })),
  };
}

function perOperation(counts: NodeRequestCounts, operations: number) {
  const per = (n: number) => (operations > 0 ? Math.round((n / operations) * 100) / 100 : 0);
  const sum = (byKey: Record<string, number>) => Object.values(byKey).reduce((a, b) => a + b, 0);
  const phases = Object.entries(counts);
  return {
    total: per(phases.reduce((total, [, byKey]) => total + sum(byKey), 0)),
    byPhase: Object.fromEntries(phases.map(([phase, byKey]) => [phase, per(sum(byKey))])),
    byMethod: Object.fromEntries(
      phases.map(([phase, byKey]) => [
        phase,
        Object.fromEntries(
          Object.entries(byKey)
            .sort(([, a], [, b]) => b - a)
            .map(([key, n]) => [key, per(n)]),
        ),
      ]),
    ),
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
    [
      "busy refusals (ops refused at least once), p50 / p95 ms to refuse",
      (r) => `${r.busyRefusals} (${r.opsRefusedAtLeastOnce}), ${ms(r.refusalLatencyMs)}`,
    ],
    ["requests timed out", (r) => String(r.requestTimeouts)],
    ["eth_chainId meanwhile p50 / p95 (ms)", (r) => ms(r.chainIdLatencyMs)],
    ["included ops/s", (r) => String(r.includedOpsPerSecond)],
    ["send latency p50 / p95 (ms)", (r) => ms(r.sendLatencyMs)],
    ["time to receipt p50 / p95 (ms)", (r) => ms(r.timeToReceiptMs)],
    ["estimate latency p50 / p95 (ms)", (r) => ms(r.estimateLatencyMs)],
    ["service CPU s per op", (r) => String(r.serviceCpuSecondsPerOp ?? "-")],
    ["node (anvil) CPU s per op", (r) => String(r.nodeCpuSecondsPerOp ?? "-")],
    [
      "node requests per op: all (estimate / send / bundle / receipt / shared)",
      (r) => {
        const p = r.nodeRequestsPerOp.byPhase;
        const at = (phase: string) => String(p[phase] ?? 0);
        return `${r.nodeRequestsPerOp.total} (${at("estimate")} / ${at("send")} / ${at("bundle")} / ${at("receipt")} / ${at("shared")})`;
      },
    ],
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

/**
 * The node requests per accepted operation by phase and method (median over the runs), with the
 * node's answering time per operation for each: where the node's work goes.
 */
export function nodeRequestTable(results: RunResults): string {
  const counts = results.nodeRequestsPerOp.byMethod;
  const ms = results.nodeMsPerOp.byMethod;
  const rows = Object.entries(counts).flatMap(([phase, byKey]) =>
    Object.entries(byKey).map(
      ([key, n]) => `| ${phase} | \`${key}\` | ${n} | ${ms[phase]?.[key] ?? "-"} |`,
    ),
  );
  return [
    "| phase | request (method, selector) | per op | node ms per op |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
