import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type MempoolPolicyName, mempoolPolicies, mempoolPolicyNames } from "@bundlekit/core";
import { createPublicClient, http, type PublicClient } from "viem";
import { captureWorkload } from "./capture.ts";
import { renderChart } from "./chart.ts";
import { type PolicyReport, replay } from "./replay.ts";
import { generateWorkload, type Workload } from "./workload.ts";

const usage = `Usage: pnpm research [options]
       pnpm research capture --rpc URL --from N --to M [--out FILE]

  --policies LIST   policies to compare, comma-separated: ${mempoolPolicyNames.join(", ")} (default: all)
  --ops N           operations in the generated workload (default 2000)
  --seed S          seed of the generated workload (default 1)
  --workload FILE   replay this workload file instead of generating one
  --out DIR         where report.json and report.svg go (default research-results)
  --help

capture turns the handleOps transactions of blocks N..M of the node at URL into a workload file
(default workload.json) to replay with --workload.`;

if (process.argv[2] === "capture") {
  const { values: capture } = parseArgs({
    args: process.argv.slice(3),
    options: { rpc: { type: "string" }, from: { type: "string" }, to: { type: "string" }, out: { type: "string", default: "workload.json" } },
  });
  if (!capture.rpc || capture.from === undefined || capture.to === undefined) {
    process.stderr.write("research: capture needs --rpc URL --from N --to M\n");
    process.exit(2);
  }
  const client = createPublicClient({ transport: http(capture.rpc) }) as PublicClient;
  const workload = await captureWorkload({ client, fromBlock: BigInt(capture.from), toBlock: BigInt(capture.to) });
  writeFileSync(capture.out, `${JSON.stringify(workload, null, 2)}\n`);
  process.stdout.write(`${workload.description}\n${capture.out}\n`);
  process.exit(0);
}

const { values } = parseArgs({
  options: {
    policies: { type: "string", default: mempoolPolicyNames.join(",") },
    ops: { type: "string", default: "2000" },
    seed: { type: "string", default: "1" },
    workload: { type: "string" },
    out: { type: "string", default: "research-results" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const fail = (message: string) => {
  process.stderr.write(`research: ${message}\n`);
  process.exit(2);
};
const policies = values.policies.split(",").map((name) => name.trim());
for (const name of policies) if (!mempoolPolicyNames.includes(name as MempoolPolicyName)) fail(`unknown policy "${name}"; choose from ${mempoolPolicyNames.join(", ")}`);
const ops = Number(values.ops);
const seed = Number(values.seed);
if (!Number.isInteger(ops) || ops < 1) fail(`--ops must be a positive integer, got "${values.ops}"`);
if (!Number.isInteger(seed)) fail(`--seed must be an integer, got "${values.seed}"`);

const workload: Workload = values.workload ? JSON.parse(readFileSync(values.workload, "utf8")) : generateWorkload({ ops, seed });
const reports: PolicyReport[] = [];
for (const name of policies) {
  const report = await replay(workload, mempoolPolicies[name as MempoolPolicyName](), {
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
mkdirSync(values.out, { recursive: true });
writeFileSync(join(values.out, "report.json"), `${JSON.stringify({ workload: workload.description, reports }, null, 2)}\n`);
writeFileSync(join(values.out, "report.svg"), await renderChart(reports));
process.stdout.write(`\n${join(values.out, "report.json")}, ${join(values.out, "report.svg")}\n`);
