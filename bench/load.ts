/**
 * Load benchmark of the stand-alone service: N user operations from M SimpleAccounts on the
 * devnet. Measures accepted ops/s, send latency, time to receipt and the service's CPU seconds
 * per operation, and writes bench/results/<name>.json and .md. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type EntryPointVersion, startDevnet } from "@bundlekit/devnet";
import { type ServiceProcess, startServiceProcess } from "@bundlekit/standalone-server";
import { type Address, createPublicClient, type Hash, http, type PublicClient } from "viem";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import {
  type BundlerClient,
  prepareOperations,
  type SignedOperation,
  setUpAccounts,
} from "./accounts.ts";
import { findChildPid, processCpuSeconds } from "./proc.ts";
import { commandLine, gitCommit, type MachineFacts, machineFacts } from "./run-facts.ts";
import { type Distribution, distribution, medianOf } from "./stats.ts";
import {
  cleanUp,
  describeError,
  exitWithUsageOnHelp,
  integerFlag,
  log,
  onCleanUp,
  runScript,
  sleep,
  UsageError,
} from "./script.ts";
import { watchUserOperationEvents } from "./user-operation-events.ts";

const usage = `Usage: pnpm bench [options]

  --ops N               user operations to send (default 200)
  --accounts M          SimpleAccounts sending them, each with consecutive nonces (default 10)
  --version V           EntryPoint version: 0.6, 0.7 or 0.8 (default 0.7)
  --concurrency C       eth_sendUserOperation requests in flight at once (default: accounts)
  --relayers R          relayer keys of the service, bundles in flight at once (default 4)
  --rate R              open loop: offer R operations per second on a fixed schedule, whatever the
                        service answers (an account's next operation still waits for its previous
                        one to be accepted); unset: as fast as --concurrency allows
  --block-time S        the devnet mines a block every S seconds (default: one block per transaction)
  --bundle-interval MS  the service's bundleInterval (default: the service's own)
  --bundle-size S       the service's bundleSize (default: the service's own)
  --queue-depth D       at most D accepted, not yet included operations per account; 0 = no limit (default 3:
                        ERC-7562 lets an unstaked sender hold 4, and the service may still count one
                        that this script has already seen on chain)
  --runs K              repeat the whole run K times (fresh devnet and service); results are medians (default 1)
  --timeout S           seconds to wait for the last receipt after the last send (default 120)
  --out DIR             where results go (default bench/results)
  --help`;

export interface LoadOptions {
  ops: number;
  accounts: number;
  version: EntryPointVersion;
  concurrency: number;
  relayers: number;
  rate: number | undefined;
  blockTime: number | undefined;
  bundleInterval: number | undefined;
  bundleSize: number | undefined;
  queueDepth: number;
  runs: number;
  timeoutSeconds: number;
  out: string;
}

/** One operation's life as the load generator saw it; times in ms from the start of sending. */
interface OpRecord extends SignedOperation {
  sentAt?: number;
  acceptedAt?: number;
  error?: string;
  includedAt?: number;
  success?: boolean;
  transactionHash?: Hash;
}

const RECEIPT_POLL_MS = 25;
const IDLE_SAMPLE_MS = 1000;

function parseOptions(argv: string[]): LoadOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      ops: { type: "string", default: "200" },
      accounts: { type: "string", default: "10" },
      version: { type: "string", default: "0.7" },
      concurrency: { type: "string" },
      relayers: { type: "string", default: "4" },
      rate: { type: "string" },
      "block-time": { type: "string" },
      "bundle-interval": { type: "string" },
      "bundle-size": { type: "string" },
      "queue-depth": { type: "string", default: "3" },
      runs: { type: "string", default: "1" },
      timeout: { type: "string", default: "120" },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean", default: false },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  if (!["0.6", "0.7", "0.8"].includes(values.version))
    throw new UsageError(`--version must be 0.6, 0.7 or 0.8, got "${values.version}"`);
  const ops = integerFlag("ops", values.ops, 1);
  const accounts = integerFlag("accounts", values.accounts, 1);
  if (accounts > ops)
    throw new UsageError(`--accounts (${accounts}) must not exceed --ops (${ops})`);
  return {
    ops,
    accounts,
    version: values.version as EntryPointVersion,
    concurrency: integerFlag("concurrency", values.concurrency ?? String(accounts), 1),
    relayers: integerFlag("relayers", values.relayers, 1),
    rate: values.rate === undefined ? undefined : integerFlag("rate", values.rate, 1),
    blockTime:
      values["block-time"] === undefined
        ? undefined
        : integerFlag("block-time", values["block-time"], 1),
    bundleInterval:
      values["bundle-interval"] === undefined
        ? undefined
        : integerFlag("bundle-interval", values["bundle-interval"], 10),
    bundleSize:
      values["bundle-size"] === undefined
        ? undefined
        : integerFlag("bundle-size", values["bundle-size"], 1),
    queueDepth: integerFlag("queue-depth", values["queue-depth"], 0),
    runs: integerFlag("runs", values.runs, 1),
    timeoutSeconds: integerFlag("timeout", values.timeout, 1),
    out: values.out,
  };
}

/** The running service, whose last log lines explain a failed run. */
let runningService: ServiceProcess | undefined;

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const machine = machineFacts();
  const runs: RunResults[] = [];
  for (let run = 1; run <= options.runs; run++) {
    if (options.runs > 1) log(`run ${run} of ${options.runs}`);
    runs.push(await runOnce(options));
  }
  const { out: _out, ...parameters } = options;
  const report = {
    date: new Date().toISOString(),
    command: commandLine("bench"),
    commit: gitCommit(),
    machine,
    parameters: {
      ...parameters,
      service: "examples/standalone-server in its own Node process, SQLite mempool file",
      gas: "one eth_estimateUserOperationGas per shape (deploying, deployed) on the first account, reused for every account (maxFeePerGas x2)",
      accountsDeployed:
        "in setup, before timing, by each account's first operation (nonce 0) through the service",
    },
    /** Each metric's median over the runs. */
    results: medianOf(runs),
    runs,
  };
  const files = writeReport(report, options);
  process.stdout.write(`\n${summaryTable(report)}\n\nresults: ${files.join(", ")}\n`);
  if (runs.some((r) => r.accepted !== r.sent || r.includedSuccessfully !== r.accepted)) {
    process.exitCode = 1;
  }
}

/** One run on a fresh devnet and service: set up, send the load, measure, stop everything. */
async function runOnce(options: LoadOptions): Promise<RunResults> {
  log(`devnet: starting anvil with ${options.relayers} relayer keys`);
  const devnet = await startDevnet({
    relayerCount: options.relayers,
    blockTime: options.blockTime,
  });
  onCleanUp(() => devnet.stop());
  const anvilPid = findChildPid(process.pid, "anvil");
  log(`devnet: anvil pid ${anvilPid ?? "unknown"} at ${devnet.rpcUrl}`);

  const dataDir = mkdtempSync(join(os.tmpdir(), "bundlekit-bench-"));
  onCleanUp(async () => rmSync(dataDir, { recursive: true, force: true }));
  const service = await startServiceProcess({
    rpcUrl: devnet.rpcUrl,
    relayerKeys: devnet.relayerKeys,
    database: join(dataDir, "mempool.sqlite"),
    env: {
      BUNDLEKIT_BUNDLE_INTERVAL: options.bundleInterval?.toString(),
      BUNDLEKIT_BUNDLE_SIZE: options.bundleSize?.toString(),
    },
  });
  runningService = service;
  onCleanUp(() => service.stop());
  log(`service: pid ${service.pid} at ${service.url}`);

  const chain = devnet.chain;
  const client = createPublicClient({
    chain,
    transport: http(devnet.rpcUrl),
    pollingInterval: 50,
  }) as PublicClient;
  const bundler = createBundlerClient({
    client,
    transport: http(service.url, { retryCount: 0, timeout: 120_000 }),
  });

  log(`setup: funding and deploying ${options.accounts} SimpleAccounts (v${options.version})`);
  const accounts = await setUpAccounts(devnet, client, bundler, chain, options);
  const entryPoint = accounts[0]!.entryPoint.address;

  log(`setup: estimating gas once and signing ${options.ops} operations`);
  const records = await prepareOperations(accounts, bundler, devnet.chainId, options);

  log(
    `load: sending ${options.ops} operations from ${options.accounts} accounts, ${options.concurrency} at a time`,
  );
  const run = await sendLoad(records, client, bundler, entryPoint, service, anvilPid, options);
  const results = summarise(records, run, service);
  await cleanUp();
  runningService = undefined;
  return results;
}

interface RunMeasurements {
  sendingMs: number;
  totalMs: number;
  timedOut: boolean;
  cpuSeconds: { service: number | undefined; anvil: number | undefined; loadGenerator: number };
  /** The service's CPU seconds per second while idle (bundling timer only), measured just before the load. */
  serviceIdleCpuPerSecond: number | undefined;
}

/**
 * The timed part: one lane per account sends its operations in nonce order (the next after the
 * previous is accepted), with at most `concurrency` requests in flight overall; a watcher polls
 * anvil for `UserOperationEvent`s. Ends when every accepted operation is on chain or at the timeout.
 */
async function sendLoad(
  records: OpRecord[],
  client: PublicClient,
  bundler: BundlerClient,
  entryPoint: Address,
  service: ServiceProcess,
  anvilPid: number | undefined,
  options: LoadOptions,
): Promise<RunMeasurements> {
  const byHash = new Map(records.map((r) => [r.hash, r]));
  const lanes = Array.from({ length: options.accounts }, (_, i) =>
    records.filter((r) => r.account === i),
  );
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const lastBlock = await client.getBlockNumber({ cacheTime: 0 });
  const anvilCpu = () => (anvilPid === undefined ? undefined : processCpuSeconds(anvilPid));
  const idleFrom = processCpuSeconds(service.pid);
  await sleep(IDLE_SAMPLE_MS);
  const idleTo = processCpuSeconds(service.pid);
  const cpuBefore = { service: idleTo, anvil: anvilCpu(), self: process.cpuUsage() };
  const t0 = performance.now();
  const now = () => performance.now() - t0;

  const watcher = watchUserOperationEvents({
    client,
    entryPoint,
    after: lastBlock,
    pollMs: RECEIPT_POLL_MS,
    onEvents(events) {
      const seenAt = now();
      for (const event of events) {
        const record = byHash.get(event.userOpHash);
        if (!record || record.includedAt !== undefined) continue;
        record.includedAt = seenAt;
        record.success = event.success;
        record.transactionHash = event.transactionHash;
      }
      if (events.length > 0) wake();
    },
    onError: (error) => log(`receipt watcher: ${describeError(error)} (retrying)`),
  });

  let slots = options.concurrency;
  const until = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      if (condition()) return resolve();
      const check = () => {
        if (!condition()) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
    });
  const outstanding = (lane: OpRecord[]) =>
    lane.filter((r) => r.acceptedAt !== undefined && r.includedAt === undefined).length;

  // Open loop: the i-th operation (accounts in turn) is due at i / rate seconds.
  const dueAt = new Map<OpRecord, number>();
  if (options.rate !== undefined) {
    const longest = Math.max(...lanes.map((lane) => lane.length));
    let i = 0;
    for (let position = 0; position < longest; position++) {
      for (const lane of lanes)
        if (lane[position]) dueAt.set(lane[position]!, (i++ * 1000) / options.rate);
    }
  }

  await Promise.all(
    lanes.map(async (lane) => {
      for (const record of lane) {
        const due = dueAt.get(record);
        if (due !== undefined) await sleep(Math.max(0, due - now()));
        else if (options.queueDepth > 0) await until(() => outstanding(lane) < options.queueDepth);
        await until(() => slots > 0);
        slots--;
        record.sentAt = now();
        try {
          const hash = await bundler.request({
            method: "eth_sendUserOperation",
            params: [formatUserOperationRequest(record.op), entryPoint],
          });
          record.acceptedAt = now();
          if (hash !== record.hash)
            record.error = `the service returned hash ${hash}, expected ${record.hash}`;
        } catch (error) {
          record.error = describeError(error);
        } finally {
          slots++;
          wake();
        }
        // A rejected nonce leaves a gap: the account's later operations could only fail (AA25).
        if (record.error) break;
      }
    }),
  );
  const sendingMs = now();
  const deadline = sendingMs + options.timeoutSeconds * 1000;
  const accepted = records.filter((r) => r.acceptedAt !== undefined);
  while (accepted.some((r) => r.includedAt === undefined) && now() < deadline)
    await sleep(RECEIPT_POLL_MS);
  const totalMs = now();
  const self = process.cpuUsage(cpuBefore.self);
  const cpuAfter = { service: processCpuSeconds(service.pid), anvil: anvilCpu() };
  await watcher.stop();

  const delta = (after: number | undefined, before: number | undefined) =>
    after === undefined || before === undefined
      ? undefined
      : Math.round((after - before) * 1000) / 1000;
  const idle = delta(idleTo, idleFrom);
  return {
    sendingMs,
    totalMs,
    timedOut: accepted.some((r) => r.includedAt === undefined),
    cpuSeconds: {
      service: delta(cpuAfter.service, cpuBefore.service),
      anvil: delta(cpuAfter.anvil, cpuBefore.anvil),
      loadGenerator: Math.round((self.user + self.system) / 1000) / 1000,
    },
    serviceIdleCpuPerSecond:
      idle === undefined ? undefined : Math.round((idle / (IDLE_SAMPLE_MS / 1000)) * 1000) / 1000,
  };
}

type RunResults = ReturnType<typeof summarise>;

/** The metrics of one run. */
function summarise(records: OpRecord[], run: RunMeasurements, service: ServiceProcess) {
  const sent = records.filter((r) => r.sentAt !== undefined);
  const accepted = records.filter((r) => r.acceptedAt !== undefined);
  const included = accepted.filter((r) => r.includedAt !== undefined);
  const errors = new Map<string, number>();
  for (const r of records) if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
  const bundles = new Set(included.map((r) => r.transactionHash));
  const lastAccepted = Math.max(0, ...accepted.map((r) => r.acceptedAt!));
  const lastIncluded = Math.max(0, ...included.map((r) => r.includedAt!));
  const perSecond = (count: number, ms: number) =>
    ms > 0 ? Math.round((count / ms) * 1000 * 10) / 10 : 0;
  const cpu = run.cpuSeconds;
  return {
    sent: sent.length,
    accepted: accepted.length,
    rejected: sent.length - accepted.length,
    notSent: records.length - sent.length,
    included: included.length,
    includedSuccessfully: included.filter((r) => r.success).length,
    notIncludedBeforeTimeout: accepted.length - included.length,
    bundles: bundles.size,
    opsPerBundle: bundles.size > 0 ? Math.round((included.length / bundles.size) * 10) / 10 : 0,
    sendingSeconds: Math.round(run.sendingMs) / 1000,
    totalSeconds: Math.round(run.totalMs) / 1000,
    acceptedOpsPerSecond: perSecond(accepted.length, lastAccepted),
    includedOpsPerSecond: perSecond(included.length, lastIncluded),
    sendLatencyMs: distribution(
      accepted.map((r) => r.acceptedAt! - r.sentAt!),
    ) satisfies Distribution,
    timeToReceiptMs: distribution(
      included.map((r) => r.includedAt! - r.sentAt!),
    ) satisfies Distribution,
    cpuSeconds: cpu,
    serviceCpuSecondsPerOp:
      cpu.service === undefined || accepted.length === 0
        ? undefined
        : Math.round((cpu.service / accepted.length) * 1e5) / 1e5,
    serviceIdleCpuPerSecond: run.serviceIdleCpuPerSecond,
    serviceCpuUtilisation:
      cpu.service === undefined
        ? undefined
        : Math.round((cpu.service / (run.totalMs / 1000)) * 100) / 100,
    serviceLogLines: { ...service.logCounts },
    errors: [...errors].map(([message, count]) => ({ message, count })),
  };
}

interface Report {
  date: string;
  command: string;
  commit: string | undefined;
  machine: MachineFacts;
  parameters: Omit<LoadOptions, "out"> & Record<string, unknown>;
  results: RunResults;
  runs: RunResults[];
}

/** A markdown table of the metrics: the medians, and each run's value when there were several. */
function summaryTable(report: Report): string {
  const ms = (d: Distribution) => `${d.p50 ?? "-"} / ${d.p95 ?? "-"}`;
  const rows: [string, (r: RunResults) => string][] = [
    ["operations accepted / sent", (r) => `${r.accepted} / ${r.sent}`],
    ["included (successful)", (r) => `${r.included} (${r.includedSuccessfully})`],
    ["bundles, ops per bundle", (r) => `${r.bundles}, ${r.opsPerBundle}`],
    ["accepted ops/s", (r) => String(r.acceptedOpsPerSecond)],
    ["included ops/s", (r) => String(r.includedOpsPerSecond)],
    ["send latency p50 / p95 (ms)", (r) => ms(r.sendLatencyMs)],
    ["time to receipt p50 / p95 (ms)", (r) => ms(r.timeToReceiptMs)],
    ["service CPU s per op", (r) => String(r.serviceCpuSecondsPerOp ?? "-")],
    [
      "service CPU s per s: under load / idle",
      (r) => `${r.serviceCpuUtilisation ?? "-"} / ${r.serviceIdleCpuPerSecond ?? "-"}`,
    ],
    [
      "CPU s: service / anvil / load generator",
      (r) =>
        `${r.cpuSeconds.service ?? "-"} / ${r.cpuSeconds.anvil ?? "-"} / ${r.cpuSeconds.loadGenerator}`,
    ],
    ["wall s: sending / total", (r) => `${r.sendingSeconds} / ${r.totalSeconds}`],
  ];
  const columns = report.runs.length > 1 ? [report.results, ...report.runs] : [report.results];
  const header =
    report.runs.length > 1 ? ["median", ...report.runs.map((_, i) => `run ${i + 1}`)] : ["value"];
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const errors = report.results.errors;
  const p = report.parameters;
  return [
    line(["metric", ...header]),
    line(["---", ...header.map(() => "---")]),
    ...rows.map(([name, value]) => line([name, ...columns.map(value)])),
    ...(errors.length > 0
      ? ["", `Errors: ${errors.map((e) => `${e.count}x ${e.message}`).join("; ")}`]
      : []),
    "",
    `\`${report.command}\` — EntryPoint v${p.version}, ${p.ops} ops from ${p.accounts} accounts, ` +
      `${p.rate === undefined ? `concurrency ${p.concurrency}` : `offered at ${p.rate} ops/s`}, ` +
      `${p.blockTime === undefined ? "a block per transaction" : `a block every ${p.blockTime} s`}, ${p.relayers} relayers, ` +
      `bundleInterval ${p.bundleInterval ?? "default"}${p.bundleInterval === undefined ? "" : " ms"}, bundleSize ${p.bundleSize ?? "default"}; ` +
      `${report.machine.cores} cores, Node ${report.machine.node}, ${report.date.slice(0, 10)}`,
  ].join("\n");
}

function writeReport(report: Report, options: LoadOptions): string[] {
  const dir = resolve(options.out);
  mkdirSync(dir, { recursive: true });
  const name = `load-v${options.version}-${options.ops}ops-${options.accounts}accounts`;
  const json = join(dir, `${name}.json`);
  const md = join(dir, `${name}.md`);
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    md,
    `# Load: ${name}\n\n${summaryTable(report)}\n\nCommit ${report.commit ?? "unknown"}, ${report.machine.cpuModel ?? "unknown CPU"}, load average at start ${report.machine.loadAverageAtStart.join(" ")}.\n`,
  );
  return [json, md].map((file) => relative(process.cwd(), file));
}

runScript("bench", usage, main, () =>
  runningService ? ["last lines of the service:", ...runningService.tail()] : [],
);
