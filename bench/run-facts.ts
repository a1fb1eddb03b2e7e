/** Facts every recorded bench result carries: the machine, the exact command and the commit. */
import { execFileSync } from "node:child_process";
import os from "node:os";
import { relative } from "node:path";
import { resolveAnvilBinary } from "@bundlekit/devnet";

/** The machine a run was measured on, and how busy it was at the start. */
export function machineFacts() {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    anvil: output(resolveAnvilBinary(), ["--version"])?.split("\n")[0],
    loadAverageAtStart: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

export type MachineFacts = ReturnType<typeof machineFacts>;

/** The command that reproduces this run, as it was typed: through `pnpm <script>` or node directly. */
export function commandLine(script: string): string {
  const args = process.argv.slice(2).join(" ");
  if (process.env.npm_lifecycle_event === script) return `pnpm ${script}${args ? ` ${args}` : ""}`;
  const file = relative(process.cwd(), process.argv[1]!);
  return ["node", ...process.execArgv, file, ...process.argv.slice(2)].join(" ");
}

/** The checked-out commit, marked when the working tree has uncommitted changes. */
export function gitCommit(): string | undefined {
  const head = output("git", ["rev-parse", "--short", "HEAD"]);
  if (head === undefined) return undefined;
  const dirty = output("git", ["status", "--porcelain", "--untracked-files=no"]);
  return dirty ? `${head} (with uncommitted changes)` : head;
}

function output(file: string, args: string[]): string | undefined {
  try {
    return execFileSync(file, args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}
