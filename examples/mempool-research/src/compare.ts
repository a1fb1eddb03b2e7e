import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { BundlerConfigError, mergeBundlerSettings } from "@bundlekit/core";
import { type CompareCommand, flagOf, settingsFromJson, UsageError } from "./arguments.ts";
import {
  type ExperimentParameters,
  type ExperimentReport,
  runExperiment,
  type SeededWorkload,
} from "./experiment.ts";
import { PolicyFileError, resolvePolicies } from "./policies.ts";
import { scenarios } from "./scenarios.ts";
import { checkWorkload, generateWorkload } from "./workload.ts";

/** The JSON in file `path` (relative to `cwd`), or a `UsageError` naming `flag` and saying why not. */
function readJson(path: string, flag: string, cwd: string): unknown {
  try {
    return JSON.parse(readFileSync(resolve(cwd, path), "utf8"));
  } catch (error) {
    throw new UsageError(
      `${flag} ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * The comparison `command` asks for: the scenario, with the command line's workload, chain and
 * settings over it, every policy on every workload. Paths are relative to `cwd`. What the user
 * can fix (a policy file, a setting, a workload parameter or file, the baseline) is a
 * `UsageError` saying what is wrong.
 */
export async function compare(
  command: CompareCommand,
  options: { cwd: string; onProgress?: ExperimentParameters["onProgress"] },
): Promise<ExperimentReport> {
  const { cwd } = options;
  const scenario = scenarios[command.scenario];
  const fileSettings = command.settingsFile
    ? settingsFromJson(readJson(command.settingsFile, "--settings", cwd), command.settingsFile)
    : undefined;
  const settings = mergeBundlerSettings(scenario.settings, fileSettings, command.settings);
  if (command.policies.length + command.policyFiles.length === 0)
    throw new UsageError(
      "no policy to compare: name shipped ones with --policies, or load one with --policy ./file.ts",
    );
  try {
    const policies = await resolvePolicies(command.policies, command.policyFiles, cwd);
    const names = policies.map((p) => p.name);
    if (command.baseline !== undefined && !names.includes(command.baseline))
      throw new UsageError(
        `the baseline "${command.baseline}" is not among the policies compared (${names.join(", ")})`,
      );
    let workloads: SeededWorkload[];
    try {
      workloads = command.workloadFile
        ? [
            {
              seed: undefined,
              workload: checkWorkload(readJson(command.workloadFile, "--workload", cwd)),
            },
          ]
        : Array.from({ length: command.seeds }, (_, i) => ({
            seed: command.seed + i,
            workload: generateWorkload({
              ...scenario.workload,
              ...command.workload,
              ops: command.ops,
              seed: command.seed + i,
            }),
          }));
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      // A workload file's fault, or a generator parameter out of range named as the option that sets it.
      throw new UsageError(
        command.workloadFile
          ? `--workload ${command.workloadFile}: ${error.message}`
          : error.message.replace(/^(\w+) must/, (_, name: string) => `${flagOf(name)} must`),
      );
    }
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
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  } catch (error) {
    if (error instanceof PolicyFileError || error instanceof BundlerConfigError)
      throw new UsageError(error.message);
    throw error;
  }
}
