import { mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { createPublicClient, http, type PublicClient } from "viem";
import { parseResearchArguments, type ResearchCommand, UsageError, usage } from "./arguments.ts";
import { captureWorkload } from "./capture.ts";
import { renderChart, renderPng } from "./chart.ts";
import { compare } from "./compare.ts";
import type { ExperimentReport } from "./experiment.ts";
import { formatReport } from "./table.ts";

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
let report: ExperimentReport;
try {
  report = await compare(parsed, {
    cwd,
    onProgress: ({ policy, run, runs, share }) => {
      if (!process.stderr.isTTY) return;
      process.stderr.write(
        `\r\u001b[2K${policy} (${run}/${runs}) [${"#".repeat(Math.round(share * 30)).padEnd(30)}] ${Math.round(share * 100)}%`,
      );
    },
  });
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  fail(error.message);
} finally {
  if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
}
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
