import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mempoolPolicies } from "@bundlekit/core";
import { createPublicClient, http, type PublicClient } from "viem";
import { parseResearchArguments, type ResearchCommand, UsageError, usage } from "./arguments.ts";
import { captureWorkload } from "./capture.ts";
import { renderChart } from "./chart.ts";
import { type PolicyReport, replay } from "./replay.ts";
import { generateWorkload, type Workload } from "./workload.ts";

let parsed: ResearchCommand;
try {
  parsed = parseResearchArguments(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`research: ${error.message}\n`);
  process.exit(2);
}
if (parsed.command === "help") {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (parsed.command === "capture") {
  const client = createPublicClient({ transport: http(parsed.rpc) }) as PublicClient;
  const captured = await captureWorkload({ client, fromBlock: parsed.fromBlock, toBlock: parsed.toBlock });
  writeFileSync(parsed.out, `${JSON.stringify(captured, null, 2)}\n`);
  process.stdout.write(`${captured.description}\n${parsed.out}\n`);
  process.exit(0);
}
const { policies, ops, seed, out, entryPointVersion } = parsed;

const workload: Workload = parsed.workload ? JSON.parse(readFileSync(parsed.workload, "utf8")) : generateWorkload({ ops, seed });
const reports: PolicyReport[] = [];
for (const name of policies) {
  const report = await replay(workload, mempoolPolicies[name](), {
    entryPointVersion,
    onProgress: (share) => {
      if (process.stderr.isTTY) process.stderr.write(`\r${name.padEnd(8)} [${"#".repeat(Math.round(share * 30)).padEnd(30)}] ${Math.round(share * 100)}%`);
    },
  });
  if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
  reports.push(report);
}

const gwei = (wei: string) => (Number(BigInt(wei) / 1_000_000n) / 1000).toFixed(3);
const rows = [
  ["policy", "admitted", "included", "dropped", "latency p50/p95/p99 (blocks)", "latency p50/p95/p99 (s)", "net revenue (gwei)", "fairness (Jain)", "wall (s)"],
  ...reports.map((r) => [
    r.policy,
    `${r.admitted}/${r.offered}`,
    String(r.included),
    String(Object.values(r.dropped).reduce((a, b) => a + b, 0)),
    `${r.latencyBlocks.p50} / ${r.latencyBlocks.p95} / ${r.latencyBlocks.p99}`,
    `${r.latencySeconds.p50} / ${r.latencySeconds.p95} / ${r.latencySeconds.p99}`,
    gwei(r.revenue.net),
    String(r.fairness),
    String(r.wallSeconds),
  ]),
];
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
process.stdout.write(`${workload.description}\n\n${rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ")).join("\n")}\n`);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "report.json"), `${JSON.stringify({ workload: workload.description, reports }, null, 2)}\n`);
writeFileSync(join(out, "report.svg"), await renderChart(reports));
process.stdout.write(`\n${join(out, "report.json")}, ${join(out, "report.svg")}\n`);
