import { parseArgs } from "node:util";
import {
  type BundlerSettingsInput,
  bundlerSettingRules,
  mempoolPolicyNames,
} from "@bundlekit/core";
import { type ChainOptions, simulatedEntryPointVersions } from "./replay.ts";
import { type ScenarioName, scenarioNames } from "./scenarios.ts";
import type { GenerateWorkloadParameters } from "./workload.ts";

export const usage = `Usage: pnpm research [options]
       pnpm research capture --rpc URL --from N --to M [--out FILE]

Policies
  --policies LIST           shipped policies to compare, comma-separated: ${mempoolPolicyNames.join(", ")} (default: all)
  --policy FILE[#EXPORT]    a policy of your own: a module exporting a MempoolPolicy or a function
                            making one (docs/research.md); repeat for several
  --baseline NAME           the policy the others are compared with (default: the first)

Workload
  --scenario NAME           ${scenarioNames.join(", ")} (default steady)
  --workload FILE           replay this workload file (e.g. from capture) instead of generating one
  --ops N                   operations in each generated workload (default 2000)
  --seeds N                 workloads generated, one per seed (default 5)
  --seed S                  the first seed (default 1)
  --rate R                  mean arrivals per second (default 50)
  --burst-factor F          arrivals in a burst come F times faster (default 5)
  --burst-share S           share of the time in bursts (default 0.1)
  --burst-ms MS             length of a burst (default 2000)
  --senders N               distinct senders (default ops / ops-per-sender)
  --ops-per-sender N        mean operations per sender (default 5)
  --sender-skew Z           Zipf exponent of the senders' shares; 0 is uniform (default 1)
  --sender-gap-ms MS        least time between two operations of a sender (default 2000)
  --spammer-share S         share of operations sent by one spammy sender (default 0)
  --spammer-fee-factor F    the spammer's fees, times the others' (default 1)
  --priority-fee-gwei G     median priority fee (log-normal; default 1)
  --priority-fee-spread S   its log-normal sigma (default 0.6)
  --max-fee-headroom-gwei G median of maxFeePerGas minus the priority fee (default 4)
  --call-gas-min N          least call gas (default 20000)
  --call-gas-mean N         mean call gas above it (exponential; default 60000)
  --paymaster-share S       share of operations a paymaster sponsors (default 0)
  --paymasters N            paymasters sharing them (default 3; staked)
  --fee-spikes N            rushes of arrivals bidding higher fees (default 0)
  --fee-spike-factor F      fees in a spike, times the usual (default 10)
  --fee-spike-rate-factor F arrivals in a spike, times the rate (default 3)
  --fee-spike-ms MS         length of a spike (default 5000)
  --failure-rate S          share failing validation by bundling time (default 0.02)
  --revert-rate S           share whose execution reverts (default 0.05)
  --no-pacing               send every operation at its arrival: the pool refuses what exceeds
                            ERC-7562's per-sender limit (default: a sender waits for room)

Chain and engine
  --block-time-ms MS        time between blocks (default 1000)
  --block-gas-limit GAS     gas a block holds (default 30000000)
  --initial-base-fee-gwei G the first block's base fee (default 1)
  --entry-point V           the EntryPoint version the simulated chain runs: ${simulatedEntryPointVersions.join(", ")} (default 0.7)
  --setting GROUP.FIELD=V   any engine setting (docs/configuration.md), e.g.
                            bundling.maxOperations=50, mempool.ttlSeconds=60; repeat for several
  --settings FILE           engine settings from a JSON file, e.g. {"bundling": {"maxOperations": 50}}

Statistics and output
  --bootstrap N             bootstrap resamples for the 95% intervals (default 1000)
  --out DIR                 where report.json, report.svg and report.png go (default research-results)
  --help

A scenario sets the workload, chain and settings; the options above override it. Paths are
relative to the directory you run the command in.

capture turns the handleOps transactions of blocks N..M of the node at URL into a workload file
(default workload.json) to replay with --workload.`;

/** A command line `pnpm research` cannot run: it prints the message and exits 2. */
export class UsageError extends Error {}

/** What `pnpm research` compares, on what. */
export interface CompareCommand {
  command: "compare";
  /** Shipped policies by name, then policy files, in order. */
  policies: string[];
  policyFiles: string[];
  baseline: string | undefined;
  scenario: ScenarioName;
  workloadFile: string | undefined;
  ops: number;
  seed: number;
  seeds: number;
  /** Workload parameters given on the command line, over the scenario's. */
  workload: Partial<Omit<GenerateWorkloadParameters, "ops" | "seed">>;
  pacing: boolean;
  /** Chain options given on the command line, over the scenario's. */
  chain: ChainOptions;
  /** Engine settings given with --setting, over --settings FILE's, over the scenario's. */
  settings: BundlerSettingsInput;
  settingsFile: string | undefined;
  bootstrap: number;
  out: string;
}

/** What `pnpm research` was asked to do. */
export type ResearchCommand =
  | { command: "capture"; rpc: string; fromBlock: bigint; toBlock: bigint; out: string }
  | CompareCommand
  | { command: "help" };

/** The workload options, by flag: the generator's parameter each sets, and whether it takes whole numbers. */
const workloadFlags = {
  rate: ["rate", false],
  "burst-factor": ["burstFactor", false],
  "burst-share": ["burstShare", false],
  "burst-ms": ["burstMs", false],
  senders: ["senders", true],
  "ops-per-sender": ["opsPerSender", false],
  "sender-skew": ["senderSkew", false],
  "sender-gap-ms": ["senderGapMs", false],
  "spammer-share": ["spammerShare", false],
  "spammer-fee-factor": ["spammerFeeFactor", false],
  "priority-fee-gwei": ["priorityFeeGwei", false],
  "priority-fee-spread": ["priorityFeeSpread", false],
  "max-fee-headroom-gwei": ["maxFeeHeadroomGwei", false],
  "call-gas-min": ["callGasMin", true],
  "call-gas-mean": ["callGasMean", true],
  "paymaster-share": ["paymasterShare", false],
  paymasters: ["paymasters", true],
  "fee-spikes": ["feeSpikes", true],
  "fee-spike-factor": ["feeSpikeFactor", false],
  "fee-spike-rate-factor": ["feeSpikeRateFactor", false],
  "fee-spike-ms": ["feeSpikeMs", false],
  "failure-rate": ["failureRate", false],
  "revert-rate": ["revertRate", false],
} as const satisfies Record<string, readonly [keyof GenerateWorkloadParameters, boolean]>;

/** The flag that sets generator parameter `name` (`senderGapMs` is `--sender-gap-ms`). */
export function flagOf(name: string): string {
  return `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** `text` as a number, or a `UsageError` naming `flag`. */
function numberOf(
  flag: string,
  text: string,
  options: { integer?: boolean; min?: number } = {},
): number {
  const value = Number(text);
  const min = options.min ?? Number.NEGATIVE_INFINITY;
  const kind = options.integer
    ? min >= 1
      ? "a positive integer"
      : "an integer"
    : min > 0
      ? "a number above 0"
      : "a number";
  if (
    text.trim() === "" ||
    !Number.isFinite(value) ||
    (options.integer && !Number.isInteger(value)) ||
    value < min
  ) {
    throw new UsageError(`${flag} must be ${kind}, got "${text}"`);
  }
  return value;
}

/** An amount of wei: a whole number, or a number with the unit gwei or eth ("5 gwei", "0.1eth"). */
function weiOf(name: string, text: string): bigint {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(wei|gwei|eth|ether)?\s*$/i.exec(text);
  if (!match)
    throw new UsageError(
      `${name} must be an amount of wei ("1000", "5 gwei", "0.1 eth"), got "${text}"`,
    );
  const amount = match[1]!;
  const unit = (match[2] ?? "wei").toLowerCase();
  const decimals = unit === "gwei" ? 9 : unit === "wei" ? 0 : 18;
  const [whole, fraction = ""] = amount.split(".") as [string, string | undefined];
  if (fraction.length > decimals)
    throw new UsageError(`${name} must be a whole number of wei, got "${text}"`);
  return BigInt(whole + fraction.padEnd(decimals, "0"));
}

/**
 * One engine setting, `group.field` to `value` in the form its rule takes (docs/configuration.md):
 * numbers, gas and wei amounts, booleans; strings for the rest. The engine's own check
 * (`resolveBundlerSettings`) then holds it to its range.
 */
export function settingValue(name: string, value: unknown): unknown {
  const [group, field, ...rest] = name.split(".");
  const rules = bundlerSettingRules as Record<string, Record<string, { kind: string }>>;
  if (!group || !rules[group])
    throw new UsageError(
      `${name}: "${group}" is not a settings group (${Object.keys(rules).join(", ")})`,
    );
  const rule = field && rest.length === 0 ? rules[group][field] : undefined;
  if (!rule)
    throw new UsageError(
      `${name}: "${field ?? ""}" is not a setting of ${group} (${Object.keys(rules[group]).join(", ")})`,
    );
  const text = String(value);
  switch (rule.kind) {
    case "integer":
      return typeof value === "number" ? value : numberOf(name, text, { integer: true });
    case "gas":
      if (!/^\s*\d+\s*$/.test(text))
        throw new UsageError(`${name} must be a whole amount of gas, got "${text}"`);
      return BigInt(text.trim());
    case "wei":
      return weiOf(name, text);
    case "boolean":
      if (value === true || value === false) return value;
      if (text === "true" || text === "false") return text === "true";
      throw new UsageError(`${name} must be true or false, got "${text}"`);
    case "whitelist":
      if (typeof value === "object") return value;
      throw new UsageError(`${name} is a list of addresses per kind: set it in a --settings file`);
    default:
      return value;
  }
}

/** `GROUP.FIELD=VALUE` pairs as nested engine settings. */
function settingsOfPairs(pairs: readonly string[]): BundlerSettingsInput {
  const settings: Record<string, Record<string, unknown>> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at < 0)
      throw new UsageError(
        `--setting must be GROUP.FIELD=VALUE (e.g. bundling.maxOperations=50), got "${pair}"`,
      );
    const name = pair.slice(0, at).trim();
    const [group, field] = name.split(".") as [string, string];
    const value = settingValue(name, pair.slice(at + 1).trim());
    settings[group] = { ...settings[group], [field]: value };
  }
  return settings as BundlerSettingsInput;
}

/**
 * Engine settings from a --settings file's JSON (`{"bundling": {"maxOperations": 50}}`), each value
 * in its rule's form: gas and wei may be numbers or strings ("5 gwei"). `source` names the file in errors.
 */
export function settingsFromJson(json: unknown, source: string): BundlerSettingsInput {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new UsageError(
      `${source} must hold a JSON object of settings groups, e.g. {"bundling": {"maxOperations": 50}}`,
    );
  const settings: Record<string, Record<string, unknown>> = {};
  for (const [group, fields] of Object.entries(json)) {
    if (typeof fields !== "object" || fields === null || Array.isArray(fields))
      throw new UsageError(`${source}: "${group}" must be an object of settings`);
    for (const [field, value] of Object.entries(fields)) {
      settings[group] = { ...settings[group], [field]: settingValue(`${group}.${field}`, value) };
    }
  }
  return settings as BundlerSettingsInput;
}

/** The command in `argv` (the arguments after the script), or a `UsageError` saying what is wrong. */
export function parseResearchArguments(argv: readonly string[]): ResearchCommand {
  if (argv[0] === "capture") {
    const { values } = parse(argv.slice(1), {
      rpc: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      out: { type: "string", default: "workload.json" },
    });
    if (!values.rpc || values.from === undefined || values.to === undefined)
      throw new UsageError("capture needs --rpc URL --from N --to M");
    const block = (flag: string, text: string) =>
      BigInt(numberOf(flag, text, { integer: true, min: 0 }));
    return {
      command: "capture",
      rpc: values.rpc,
      fromBlock: block("--from", values.from),
      toBlock: block("--to", values.to),
      out: values.out,
    };
  }
  const { values } = parse(argv, {
    policies: { type: "string" },
    policy: { type: "string", multiple: true, default: [] },
    baseline: { type: "string" },
    scenario: { type: "string", default: "steady" },
    workload: { type: "string" },
    ops: { type: "string", default: "2000" },
    seed: { type: "string", default: "1" },
    seeds: { type: "string", default: "5" },
    ...Object.fromEntries(Object.keys(workloadFlags).map((flag) => [flag, { type: "string" }])),
    "no-pacing": { type: "boolean", default: false },
    "block-time-ms": { type: "string" },
    "block-gas-limit": { type: "string" },
    "initial-base-fee-gwei": { type: "string" },
    "entry-point": { type: "string" },
    setting: { type: "string", multiple: true, default: [] },
    settings: { type: "string" },
    bootstrap: { type: "string", default: "1000" },
    out: { type: "string", default: "research-results" },
    help: { type: "boolean", default: false },
  });
  if (values.help) return { command: "help" };
  const given: Record<string, unknown> = values;
  const text = (flag: string) => given[flag] as string | undefined;
  const policyFiles = values.policy;
  const policies = (text("policies") ?? mempoolPolicyNames.join(","))
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of policies) {
    if (!(mempoolPolicyNames as string[]).includes(name))
      throw new UsageError(
        `unknown policy "${name}"; choose from ${mempoolPolicyNames.join(", ")}, or load one from a file with --policy ./file.ts`,
      );
  }
  const scenario = scenarioNames.find((name) => name === text("scenario"));
  if (!scenario)
    throw new UsageError(
      `unknown scenario "${text("scenario")}"; choose from ${scenarioNames.join(", ")}`,
    );
  const workload: Record<string, number> = {};
  for (const [flag, [parameter, integer]] of Object.entries(workloadFlags)) {
    const given = text(flag);
    if (given !== undefined) workload[parameter] = numberOf(`--${flag}`, given, { integer });
  }
  const chain: ChainOptions = {};
  if (text("block-time-ms") !== undefined)
    chain.blockTimeMs = numberOf("--block-time-ms", text("block-time-ms")!, {
      integer: true,
      min: 1,
    });
  if (text("block-gas-limit") !== undefined)
    chain.blockGasLimit = BigInt(
      numberOf("--block-gas-limit", text("block-gas-limit")!, { integer: true, min: 21_000 }),
    );
  if (text("initial-base-fee-gwei") !== undefined)
    chain.initialBaseFee = weiOf(
      "--initial-base-fee-gwei",
      `${text("initial-base-fee-gwei")} gwei`,
    );
  const entryPoint = text("entry-point");
  if (entryPoint !== undefined) {
    const version = simulatedEntryPointVersions.find((v) => v === entryPoint);
    if (!version)
      throw new UsageError(
        `--entry-point must be one of ${simulatedEntryPointVersions.join(", ")}, got "${entryPoint}"`,
      );
    chain.entryPointVersion = version;
  }
  return {
    command: "compare",
    policies,
    policyFiles,
    baseline: text("baseline"),
    scenario,
    workloadFile: text("workload"),
    ops: numberOf("--ops", text("ops")!, { integer: true, min: 1 }),
    seed: numberOf("--seed", text("seed")!, { integer: true }),
    seeds: numberOf("--seeds", text("seeds")!, { integer: true, min: 1 }),
    workload,
    pacing: !values["no-pacing"],
    chain,
    settings: settingsOfPairs(values.setting),
    settingsFile: text("settings"),
    bootstrap: numberOf("--bootstrap", text("bootstrap")!, { integer: true, min: 1 }),
    out: text("out")!,
  };
}

type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>["options"]>;

/** `parseArgs`, its own errors (an unknown option, a missing value) as `UsageError`s. */
function parse<const O extends Options>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: false, strict: true });
  } catch (error) {
    // Node's first sentence ("Unknown option '--rates'"), not its advice on positionals.
    const text = error instanceof Error ? error.message : String(error);
    const first = text.split(/\.(?:\s|$)|\n/)[0]!;
    const dash = /use '(--[\w-]+)=-XYZ'/.exec(text);
    throw new UsageError(
      dash
        ? `${first}: write a value starting with a dash as ${dash[1]}=-VALUE`
        : `${first}; pnpm research --help lists the options`,
    );
  }
}
