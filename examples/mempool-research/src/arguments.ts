import { parseArgs } from "node:util";
import { type MempoolPolicyName, mempoolPolicyNames } from "@bundlekit/core";
import type { SimulatedEntryPointVersion } from "./replay.ts";

const simulatedVersions: readonly SimulatedEntryPointVersion[] = ["0.7", "0.8", "0.9"];

export const usage = `Usage: pnpm research [options]
       pnpm research capture --rpc URL --from N --to M [--out FILE]

  --policies LIST   policies to compare, comma-separated: ${mempoolPolicyNames.join(", ")} (default: all)
  --ops N           operations in the generated workload (default 2000)
  --seed S          seed of the generated workload (default 1)
  --workload FILE   replay this workload file instead of generating one
  --entry-point V   the EntryPoint version the simulated chain runs: 0.7, 0.8 or 0.9 (default 0.7)
  --out DIR         where report.json and report.svg go (default research-results)
  --help

capture turns the handleOps transactions of blocks N..M of the node at URL into a workload file
(default workload.json) to replay with --workload.`;

/** A command line `pnpm research` cannot run: it prints the message and exits 2. */
export class UsageError extends Error {}

/** What `pnpm research` was asked to do. */
export type ResearchCommand =
  | { command: "capture"; rpc: string; fromBlock: bigint; toBlock: bigint; out: string }
  | {
      command: "compare";
      policies: MempoolPolicyName[];
      ops: number;
      seed: number;
      workload: string | undefined;
      out: string;
      entryPointVersion: SimulatedEntryPointVersion;
    }
  | { command: "help" };

/** The command in `argv` (the arguments after the script), or a `UsageError` saying what is wrong. */
export function parseResearchArguments(argv: readonly string[]): ResearchCommand {
  if (argv[0] === "capture") {
    const { values } = parseArgs({
      args: argv.slice(1),
      options: {
        rpc: { type: "string" },
        from: { type: "string" },
        to: { type: "string" },
        out: { type: "string", default: "workload.json" },
      },
    });
    if (!values.rpc || values.from === undefined || values.to === undefined)
      throw new UsageError("capture needs --rpc URL --from N --to M");
    return {
      command: "capture",
      rpc: values.rpc,
      fromBlock: BigInt(values.from),
      toBlock: BigInt(values.to),
      out: values.out,
    };
  }
  const { values } = parseArgs({
    args: [...argv],
    options: {
      policies: { type: "string", default: mempoolPolicyNames.join(",") },
      ops: { type: "string", default: "2000" },
      seed: { type: "string", default: "1" },
      workload: { type: "string" },
      out: { type: "string", default: "research-results" },
      "entry-point": { type: "string", default: "0.7" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) return { command: "help" };
  const policies = values.policies.split(",").map((name) => name.trim());
  for (const name of policies) {
    if (!mempoolPolicyNames.includes(name as MempoolPolicyName))
      throw new UsageError(
        `unknown policy "${name}"; choose from ${mempoolPolicyNames.join(", ")}`,
      );
  }
  const ops = Number(values.ops);
  const seed = Number(values.seed);
  if (!Number.isInteger(ops) || ops < 1)
    throw new UsageError(`--ops must be a positive integer, got "${values.ops}"`);
  if (!Number.isInteger(seed))
    throw new UsageError(`--seed must be an integer, got "${values.seed}"`);
  const entryPointVersion = simulatedVersions.find((v) => v === values["entry-point"]);
  if (!entryPointVersion)
    throw new UsageError(
      `--entry-point must be one of ${simulatedVersions.join(", ")}, got "${values["entry-point"]}"`,
    );
  return {
    command: "compare",
    policies: policies as MempoolPolicyName[],
    ops,
    seed,
    workload: values.workload,
    out: values.out,
    entryPointVersion,
  };
}
