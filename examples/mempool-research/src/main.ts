import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { BundlerConfigError, mergeBundlerSettings } from "@bundlekit/core";
import { createPublicClient, http, type PublicClient } from "viem";
import {
  type CompareCommand,
  flagOf,
  parseResearchArguments,
  type ResearchCommand,
  settingsFromJson,
  UsageError,
  usage,
} from "./arguments.ts";
import { captureWorkload } from "./capture.ts";
import { renderChart, renderPng } from "./chart.ts";
import { type ExperimentReport, runExperiment, type SeededWorkload } from "./experiment.ts";
import { PolicyFileError, resolvePolicies } from "./policies.ts";
import { scenarios } from "./scenarios.ts";
import { formatReport } from "./table.ts";
import { generateWorkload, type Workload } from "./workload.ts";

/**
 * Where the user ran the command: pnpm runs its scripts in the workspace's folder, and says where
 * it was started in `INIT_CWD` (as does `./bundlekit research`); paths on the command line are
 * taken from there.
 */
const cwd = process.env.INIT_CWD || process.cwd();
const fromCwd = (path: string) => resolve(cwd, path);
/** A path as the user would type it from where they are. */
const shown = (path: string) => {
  const near = relative(cwd, path);
  return near && !near.startsWith("..") && !isAbsolute(near) ? near : path;
};

function fail(message: string): never {
  process.stderr.write(`research: ${message}\n`);
  process.exit(2);
}

let parsed: ResearchCommand;
try {
  parsed = parseResearchArguments(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  fail(error.message);
}
if (parsed.command === "help") {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (parsed.command === "capture") {
  const client = createPublicClient({ transport: http(parsed.rpc) }) as PublicClient;
  const captured = await captureWorkload({
    client,
    fromBlock: parsed.fromBlock,
    toBlock: parsed.toBlock,
  });
  const out = fromCwd(parsed.out);
  writeFileSync(out, `${JSON.stringify(captured, null, 2)}\n`);
  process.stdout.write(`${captured.description}\n${shown(out)}\n`);
  process.exit(0);
}
const report = await compare(parsed);
const out = fromCwd(parsed.out);
mkdirSync(out, { recursive: true });
const files = {
  json: join(out, "report.json"),
  svg: join(out, "report.svg"),
  png: join(out, "report.png"),
};
writeFileSync(
  files.json,
  `${JSON.stringify(report, (_, value) => (typeof value === "bigint" ? value.toString() : value), 2)}\n`,
);
const svg = await renderChart(report);
writeFileSync(files.svg, svg);
writeFileSync(files.png, renderPng(svg));
process.stdout.write(`${formatReport(report)}\n${Object.values(files).map(shown).join(", ")}\n`);

/** Run the comparison `command` asks for; a bad policy file, setting or workload parameter ends the process with its message. */
async function compare(command: CompareCommand): Promise<ExperimentReport> {
  const scenario = scenarios[command.scenario];
  try {
    const fileSettings = command.settingsFile
      ? settingsFromJson(readJson(command.settingsFile, "--settings"), command.settingsFile)
      : undefined;
    const settings = mergeBundlerSettings(scenario.settings, fileSettings, command.settings);
    const policies = await resolvePolicies(command.policies, command.policyFiles, cwd);
    const parameters = { ...scenario.workload, ...command.workload };
    const workloads: SeededWorkload[] = command.workloadFile
      ? [{ seed: undefined, workload: readJson(command.workloadFile, "--workload") as Workload }]
      : Array.from({ length: command.seeds }, (_, i) => ({
          seed: command.seed + i,
          workload: generateWorkload({ ...parameters, ops: command.ops, seed: command.seed + i }),
        }));
    const described = command.workloadFile
      ? workloads[0]!.workload.description
      : workloads[0]!.workload.description.replace(/, seed -?\d+/, "");
    return await runExperiment({
      policies,
      ...(command.baseline ? { baseline: command.baseline } : {}),
      workloads,
      description: `${command.workloadFile ? "workload file" : command.scenario}: ${described}`,
      replay: { ...scenario.chain, ...command.chain, settings, pacing: command.pacing },
      bootstrap: command.bootstrap,
      statisticsSeed: command.seed,
      onProgress: ({ policy, run, runs, share }) => {
        if (!process.stderr.isTTY) return;
        process.stderr.write(
          `\r\u001b[2K${policy} (${run}/${runs}) [${"#".repeat(Math.round(share * 30)).padEnd(30)}] ${Math.round(share * 100)}%`,
        );
        if (run === runs && share >= 1) process.stderr.write("\r\u001b[2K");
      },
    });
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof PolicyFileError ||
      error instanceof BundlerConfigError
    )
      fail(error.message);
    // A workload parameter out of range, named as the generator names it: say the flag instead.
    if (error instanceof RangeError)
      fail(error.message.replace(/^(\w+) must/, (_, name: string) => `${flagOf(name)} must`));
    throw error;
  } finally {
    if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
  }
}

/** The JSON in file `path` (relative to where the command was run), or the end of the process saying why not. */
function readJson(path: string, flag: string): unknown {
  try {
    return JSON.parse(readFileSync(fromCwd(path), "utf8"));
  } catch (error) {
    fail(`${flag} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
