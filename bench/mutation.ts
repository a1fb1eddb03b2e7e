/**
 * Mutation testing of the modules where a silent wrong value costs money or safety: StrykerJS
 * changes their code one small mutant at a time (`<` to `<=`, `+` to `-`, a condition to `true`,
 * …) and runs the fast unit tests (bench/mutation.vitest.config.ts) against each; a mutant no
 * test notices "survives". See docs/testing.md ("Mutation testing").
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Stryker } from "@stryker-mutator/core";
import { commandLine, gitCommit, machineFacts } from "./run-facts.ts";
import { exitWithUsageOnHelp, integerFlag, log, UsageError } from "./script.ts";

/** The modules mutated, by the name `--module` takes. */
export const modules: Record<string, readonly string[]> = {
  fees: ["packages/core/src/bundle/bundle-fees.ts", "packages/core/src/bundle/bundle-gas.ts"],
  pvg: ["packages/core/src/userop/pre-verification-gas.ts"],
  rules: [
    "packages/core/src/validation/rules/check-validation-rules.ts",
    "packages/core/src/validation/rules/entity-rules.ts",
    "packages/core/src/validation/rules/delegation-rules.ts",
    "packages/core/src/validation/rules/associated-slots.ts",
  ],
  collector: ["packages/core/src/validation/tracers/in-process/erc7562-collector.ts"],
  reputation: [
    "packages/core/src/reputation/reputation.ts",
    "packages/core/src/reputation/reputation-status.ts",
  ],
  admission: [
    "packages/core/src/engine/admission.ts",
    "packages/core/src/mempool/erc7562-admission.ts",
  ],
};

const usage = `usage: pnpm mutation [--module name]… [--concurrency N]

  --module name      only this module (repeatable): ${Object.keys(modules).join(", ")} (default all)
  --concurrency N    test runners at once (default 2)

Reports go to reports/mutation/ (HTML and JSON, git-ignored). A run of every module also writes
bench/results/mutation.json and the latest-run table in bench/results/mutation.md.`;

/** One mutant's outcome, as Stryker reports it. */
type MutantResult = Awaited<ReturnType<Stryker["runMutationTest"]>>[number];

const reportDir = "reports/mutation";
const resultsJson = "bench/results/mutation.json";
const resultsMarkdown = "bench/results/mutation.md";
const tempDirName = ".stryker-tmp";
const latestStart = "<!-- latest run: written by pnpm mutation -->";
const latestEnd = "<!-- end of latest run -->";

/** Mutant counts of one file, and its score: killed and timed-out mutants over all that ran or had no test. */
export interface FileScore {
  module: string;
  file: string;
  mutants: number;
  killed: number;
  survived: number;
  noCoverage: number;
  timeout: number;
  /** Mutants that did not compile or crashed the runner; not in the score. */
  errors: number;
  score: number;
}

/** Per file, in the order of `modules`, the counts of `results`. */
export function scoresOf(results: readonly MutantResult[], chosen: readonly string[]): FileScore[] {
  return chosen.flatMap((module) =>
    modules[module]!.map((file) => {
      const mine = results.filter((r) => r.fileName.endsWith(file));
      const count = (...statuses: MutantResult["status"][]) =>
        mine.filter((r) => statuses.includes(r.status)).length;
      const killed = count("Killed");
      const timeout = count("Timeout");
      const survived = count("Survived");
      const noCoverage = count("NoCoverage");
      const valid = killed + timeout + survived + noCoverage;
      return {
        module,
        file: file.replace("packages/core/src/", ""),
        mutants: mine.length,
        killed,
        survived,
        noCoverage,
        timeout,
        errors: count("CompileError", "RuntimeError"),
        score: valid === 0 ? 100 : Math.round(((killed + timeout) / valid) * 1000) / 10,
      };
    }),
  );
}

/** The scores as a markdown table, with a total row. */
export function scoreTable(scores: readonly FileScore[]): string {
  const sum = (key: "mutants" | "killed" | "survived" | "noCoverage" | "timeout" | "errors") =>
    scores.reduce((total, s) => total + s[key], 0);
  const valid = sum("killed") + sum("timeout") + sum("survived") + sum("noCoverage");
  const total =
    valid === 0 ? 100 : Math.round(((sum("killed") + sum("timeout")) / valid) * 1000) / 10;
  const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [
    row([
      "module",
      "file",
      "mutants",
      "killed",
      "survived",
      "no coverage",
      "timeout",
      "errors",
      "score %",
    ]),
    row(Array(9).fill("---")),
    ...scores.map((s) =>
      row([
        s.module,
        s.file,
        s.mutants,
        s.killed,
        s.survived,
        s.noCoverage,
        s.timeout,
        s.errors,
        s.score.toFixed(1),
      ]),
    ),
    row([
      "**all**",
      "",
      sum("mutants"),
      sum("killed"),
      sum("survived"),
      sum("noCoverage"),
      sum("timeout"),
      sum("errors"),
      `**${total.toFixed(1)}**`,
    ]),
  ].join("\n");
}

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      module: { type: "string", multiple: true },
      concurrency: { type: "string", default: "2" },
      help: { type: "boolean" },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  const chosen = values.module ?? Object.keys(modules);
  for (const m of chosen)
    if (!modules[m])
      throw new UsageError(`--module: unknown module "${m}" (${Object.keys(modules).join(", ")})`);
  return { modules: chosen, concurrency: integerFlag("concurrency", values.concurrency, 1) };
}

/** The vitest runner's set-up files, one per test runner, which it leaves behind (also after Ctrl-C). */
function removeSetupFiles() {
  for (const file of readdirSync(".")) if (/^stryker-setup-\d+\.js$/.test(file)) rmSync(file);
}

const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const files = options.modules.flatMap((m) => modules[m]!);
  // Stryker mutates the files in place (below) and restores them when it ends, even on Ctrl-C;
  // only a killed run leaves its backup behind.
  if (existsSync(tempDirName) && readdirSync(tempDirName).some((d) => d.startsWith("backup-"))) {
    throw new Error(
      `${tempDirName}/backup-* is left from an interrupted run: it holds the original sources. ` +
        `Restore them from there (or git), then remove ${tempDirName}.`,
    );
  }
  removeSetupFiles();
  const before = new Map(files.map((f) => [f, digest(f)]));
  const machine = machineFacts();
  const command = commandLine("mutation");
  const started = Date.now();
  const results = await new Stryker({
    mutate: files,
    testRunner: "vitest",
    plugins: [fileURLToPath(import.meta.resolve("@stryker-mutator/vitest-runner"))],
    vitest: { configFile: "bench/mutation.vitest.config.ts", related: true },
    coverageAnalysis: "perTest",
    // The tests import the sources by relative path, and packages/core's dependencies sit in its
    // own node_modules: a sandbox copy would miss them. In place, the tests load the mutants.
    inPlace: true,
    // vitest does not type-check: leave every file but the mutated ones as it is.
    disableTypeChecks: false,
    tempDirName,
    concurrency: options.concurrency,
    reporters: ["html", "json", "progress"],
    htmlReporter: { fileName: `${reportDir}/index.html` },
    jsonReporter: { fileName: `${reportDir}/mutation.json` },
    thresholds: { high: 80, low: 60, break: null },
  }).runMutationTest();
  const wallSeconds = Math.round((Date.now() - started) / 1000);
  removeSetupFiles();
  for (const [file, hash] of before) {
    if (digest(file) !== hash)
      throw new Error(`${file} differs from before the run: restore it from git`);
  }

  const scores = scoresOf(results, options.modules);
  const table = scoreTable(scores);
  process.stdout.write(`\n${table}\n\nwall time ${wallSeconds} s; reports in ${reportDir}/\n`);
  if (options.modules.length < Object.keys(modules).length) return;

  const date = new Date().toISOString();
  const commit = gitCommit();
  const { concurrency } = options;
  const report = { date, command, commit, machine, wallSeconds, concurrency, scores };
  writeFileSync(resultsJson, `${JSON.stringify(report, null, 2)}\n`);
  const load = machine.loadAverageAtStart.join(" ");
  const latest = [
    latestStart,
    `\`${command}\` at ${commit}, ${date}: ${wallSeconds} s wall time with ${concurrency} test runners, ` +
      `on ${machine.cores} cores (${machine.cpuModel}), load average ${load} at the start.`,
    "",
    table,
    latestEnd,
  ].join("\n");
  const existing = existsSync(resultsMarkdown)
    ? readFileSync(resultsMarkdown, "utf8")
    : `# Mutation testing\n\n${latestStart}\n${latestEnd}\n`;
  const [head, rest] = existing.split(latestStart);
  const tail = rest?.split(latestEnd)[1] ?? "\n";
  writeFileSync(resultsMarkdown, `${head}${latest}${tail}`);
  process.stdout.write(`results: ${resultsJson}, ${resultsMarkdown}\n`);
}

main().catch((error) => {
  const usageError = error instanceof UsageError;
  log(`mutation: ${usageError ? error.message : ((error as Error).stack ?? String(error))}`);
  if (usageError) log(usage);
  process.exit(usageError ? 2 : 1);
});
