/**
 * The research lab's replay (examples/mempool-research) as a benchmark: the default workload of N
 * operations (seed 1) through the real engine with the `default` policy on the simulated chain,
 * `--runs` times, each in a fresh process (its own heap and resident set, no heap flags). Prints
 * each run and the medians, and writes bench/results/research-replay-<ops>ops.json.
 * See bench/README.md and bench/results/research-replay.md.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { mempoolPolicies } from "@bundlekit/core";
import { replay } from "../examples/mempool-research/src/replay.ts";
import { generatePackedWorkload } from "../examples/mempool-research/src/packed-workload.ts";
import { commandLine, gitCommit, machineFacts } from "./run-facts.ts";
import { exitWithUsageOnHelp, integerFlag, log, runScript } from "./script.ts";

const usage = `usage: pnpm bench:replay [--ops N] [--runs R] [--out DIR]

  --ops N    operations in the generated workload (default 20000)
  --runs R   replays, each in a fresh process; the medians are reported (default 3)
  --out DIR  where results go (default bench/results)`;

/** One replay, measured in its own process. */
interface Run {
  /** The replay alone (workload generation and module loading excluded), seconds. */
  replaySeconds: number;
  /** CPU time of the whole process (user + system), seconds. */
  cpuSeconds: number;
  /** Maximum resident set of the whole process, bytes. */
  maxRssBytes: number;
  admitted: number;
  included: number;
}

/** In the child: generate, replay, and print the measures as one JSON line. */
async function child(ops: number) {
  // Packed as it is generated: the replay holds typed arrays, as a lab replaying millions would.
  const workload = generatePackedWorkload({ ops, seed: 1 });
  const report = await replay(workload, mempoolPolicies.default());
  const usage = process.resourceUsage();
  const run: Run = {
    replaySeconds: report.wallSeconds,
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    maxRssBytes: usage.maxRSS * 1024,
    admitted: report.admitted,
    included: report.included,
  };
  process.stdout.write(`${JSON.stringify(run)}\n`);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main() {
  const { values } = parseArgs({
    options: {
      ops: { type: "string", default: "20000" },
      runs: { type: "string", default: "3" },
      out: { type: "string", default: "bench/results" },
      child: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  const ops = integerFlag("ops", values.ops, 1);
  if (values.child) return child(ops);
  const runs = integerFlag("runs", values.runs, 1);
  const machine = machineFacts();
  const results: Run[] = [];
  for (let i = 1; i <= runs; i++) {
    const output = execFileSync(
      process.execPath,
      [...process.execArgv, process.argv[1]!, "--child", "--ops", String(ops)],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 },
    );
    const run = JSON.parse(output.trim().split("\n").at(-1)!) as Run;
    results.push(run);
    log(
      `run ${i}/${runs}: replay ${run.replaySeconds.toFixed(1)} s, CPU ${run.cpuSeconds.toFixed(1)} s, max RSS ${(run.maxRssBytes / 2 ** 20).toFixed(0)} MiB, ${run.included} of ${run.admitted} admitted included`,
    );
  }
  const summary = {
    ops,
    runs,
    medianReplaySeconds: median(results.map((r) => r.replaySeconds)),
    medianMicrosecondsPerOperation: Math.round(
      (median(results.map((r) => r.replaySeconds)) / ops) * 1e6,
    ),
    medianCpuSeconds: median(results.map((r) => r.cpuSeconds)),
    medianMaxRssMiB: Math.round(median(results.map((r) => r.maxRssBytes)) / 2 ** 20),
  };
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const file = join(out, `research-replay-${ops}ops.json`);
  const record = {
    command: commandLine("bench:replay"),
    commit: gitCommit(),
    machine,
    date: new Date().toISOString(),
    summary,
    results,
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  process.stdout.write(
    `| ${ops.toLocaleString("en")} | ${summary.medianReplaySeconds.toFixed(1)} s | ${summary.medianMicrosecondsPerOperation} µs | ${summary.medianCpuSeconds.toFixed(1)} s | ${summary.medianMaxRssMiB} MiB |\n${relative(process.cwd(), file)}\n`,
  );
}

runScript("bench:replay", usage, main);
