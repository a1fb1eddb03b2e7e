/**
 * Load benchmark of the stand-alone service: N user operations from M SimpleAccounts on the
 * devnet. Measures accepted ops/s, send latency, time to receipt and the service's CPU seconds
 * per operation, and writes bench/results/<name>.json and .md. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import { startDevnet } from "@bundlekit/devnet";
import { type ServiceProcess, startServiceProcess } from "@bundlekit/server";
import { type Address, createPublicClient, http, type PublicClient } from "viem";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import {
  type BundlerClient,
  estimateAndSign,
  prepareOperations,
  setUpAccounts,
} from "./accounts.ts";
import { loadGeneratorLimits } from "./load-generator-limits.ts";
import { retryingBusy } from "./retry-busy.ts";
import { type LoadOptions, openLoopSchedule, parseLoadOptions, usage } from "./load-options.ts";
import {
  type OpRecord,
  type Report,
  type RunMeasurements,
  type RunResults,
  nodeRequestTable,
  summarise,
  summaryTable,
} from "./load-report.ts";
import { type NodeRequestCounter, startNodeRequestCounter } from "./node-requests.ts";
import { findChildPid, processCpuSeconds } from "./proc.ts";
import { commandLine, gitCommit, machineFacts } from "./run-facts.ts";
import { cleanUp, describeError, log, onCleanUp, runScript, sleep } from "./script.ts";
import { medianOf } from "./stats.ts";
import { watchUserOperationEvents } from "./user-operation-events.ts";

const RECEIPT_POLL_MS = 25;
const IDLE_SAMPLE_MS = 1000;
const CHAIN_ID_PROBE_MS = 100;

/** The running service, whose last log lines explain a failed run. */
let runningService: ServiceProcess | undefined;

async function main() {
  const options = parseLoadOptions(process.argv.slice(2));
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
      service: "packages/server in its own Node process, SQLite mempool file",
      gas: "one eth_estimateUserOperationGas per shape (deploying, deployed) on the first account, reused for every account (maxFeePerGas x2)",
      receiptPollingMs:
        options.receipts === "service"
          ? "viem's default pollingInterval of the bundler client (min(max(blockTime / 2, 500), 4000) ms; 4000 without a chain blockTime, as on the devnet)"
          : "anvil polled for UserOperationEvents every 25 ms",
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

  // The service talks to the node through a counting proxy; the load generator talks to it directly.
  const nodeRequests = await startNodeRequestCounter({
    target: devnet.rpcUrl,
    relayers: devnet.relayerKeys.map((key) => privateKeyToAccount(key).address),
  });
  onCleanUp(() => nodeRequests.stop());

  const dataDir = mkdtempSync(join(os.tmpdir(), "bundlekit-bench-"));
  onCleanUp(async () => rmSync(dataDir, { recursive: true, force: true }));
  const service = await startServiceProcess({
    rpcUrl: nodeRequests.url,
    relayerKeys: devnet.relayerKeys,
    database: join(dataDir, "mempool.sqlite"),
    env: {
      BUNDLEKIT_BUNDLE_INTERVAL: options.bundleInterval?.toString(),
      BUNDLEKIT_BUNDLE_SIZE: options.bundleSize?.toString(),
      ...loadGeneratorLimits(options.concurrency, options.retryBusy),
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
    transport: http(service.url, { retryCount: 0, timeout: options.requestTimeoutSeconds * 1000 }),
  });

  log(`setup: funding and deploying ${options.accounts} SimpleAccounts (v${options.version})`);
  const accounts = await setUpAccounts(devnet, client, bundler, chain, options);
  const entryPoint = accounts[0]!.entryPoint.address;

  log(`setup: estimating gas once and signing ${options.ops} operations`);
  const records = await prepareOperations(accounts, bundler, devnet.chainId, options);

  log(
    `load: sending ${options.ops} operations from ${options.accounts} accounts, ${options.concurrency} at a time`,
  );
  const run = await sendLoad(records, {
    client,
    bundler,
    entryPoint,
    service,
    anvilPid,
    nodeRequests,
    estimate: options.estimate
      ? (record) =>
          estimateAndSign(
            bundler,
            accounts[record.account]!,
            record.nonce,
            devnet.chainId,
            options.version,
          )
      : undefined,
    options,
  });
  const results = summarise(records, run, service);
  await cleanUp();
  runningService = undefined;
  return results;
}

interface LoadContext {
  client: PublicClient;
  bundler: BundlerClient;
  entryPoint: Address;
  service: ServiceProcess;
  anvilPid: number | undefined;
  nodeRequests: NodeRequestCounter;
  /** With `--estimate`: the operation estimated by the service and signed with its figures. */
  estimate: ((record: OpRecord) => Promise<Pick<OpRecord, "op" | "hash">>) | undefined;
  options: LoadOptions;
}

/**
 * The timed part: one lane per account sends its operations in nonce order (the next after the
 * previous is accepted), with at most `concurrency` requests in flight overall (with `--estimate`,
 * an operation's estimate and send hold one slot); a watcher polls anvil for
 * `UserOperationEvent`s. Ends when every accepted operation is on chain or at the timeout.
 */
async function sendLoad(records: OpRecord[], context: LoadContext): Promise<RunMeasurements> {
  const { client, bundler, entryPoint, service, anvilPid, nodeRequests, options } = context;
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
  await nodeRequests.reset();
  const t0 = performance.now();
  const now = () => performance.now() - t0;

  const seen = (record: OpRecord, success: boolean, transactionHash: OpRecord["transactionHash"]) => {
    if (record.includedAt !== undefined) return;
    record.includedAt = now();
    record.success = success;
    record.transactionHash = transactionHash;
    wake();
  };
  // `--receipts service`: each client follows its operation through the service (below) instead.
  const watcher = options.receipts === "service" ? undefined : watchUserOperationEvents({
    client,
    entryPoint,
    after: lastBlock,
    pollMs: RECEIPT_POLL_MS,
    onEvents(events) {
      for (const event of events) {
        const record = byHash.get(event.userOpHash);
        if (record) seen(record, event.success, event.transactionHash);
      }
    },
    onError: (error) => log(`receipt watcher: ${describeError(error)} (retrying)`),
  });

  // A cheap method's latency while the load runs: what the service answers calls it need not queue.
  const chainIdMs: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const start = now();
      await bundler.request({ method: "eth_chainId" }).catch(() => undefined);
      chainIdMs.push(now() - start);
      await sleep(CHAIN_ID_PROBE_MS);
    }
  })();

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

  const dueAt =
    options.rate === undefined
      ? new Map<OpRecord, number>()
      : openLoopSchedule(lanes, options.rate);

  /** As a wallet does: poll the service's eth_getUserOperationReceipt at viem's default interval. */
  const followReceipt = (record: OpRecord) =>
    bundler
      .waitForUserOperationReceipt({ hash: record.hash, timeout: options.timeoutSeconds * 1000 })
      .then(
        (receipt) => seen(record, receipt.success, receipt.receipt.transactionHash),
        (error) => log(`receipt of ${record.hash}: ${describeError(error)}`),
      );

  await Promise.all(
    lanes.map(async (lane) => {
      for (const record of lane) {
        const due = dueAt.get(record);
        if (due !== undefined) await sleep(Math.max(0, due - now()));
        else if (options.queueDepth > 0) await until(() => outstanding(lane) < options.queueDepth);
        await until(() => slots > 0);
        slots--;
        const refused = (ms: number) => {
          record.refusalsMs ??= [];
          record.refusalsMs.push(ms);
        };
        const { estimate } = context;
        try {
          if (estimate) {
            record.estimateStartedAt = now();
            Object.assign(
              record,
              await retryingBusy(() => estimate(record), options.retryBusy, refused),
            );
            record.estimatedAt = now();
            byHash.set(record.hash, record);
          }
          record.sentAt = now();
          const hash = await retryingBusy(
            () =>
              bundler.request({
                method: "eth_sendUserOperation",
                params: [formatUserOperationRequest(record.op), entryPoint],
              }),
            options.retryBusy,
            refused,
          );
          record.acceptedAt = now();
          if (hash !== record.hash)
            record.error = `the service returned hash ${hash}, expected ${record.hash}`;
          else if (options.receipts === "service") followReceipt(record);
        } catch (error) {
          record.error = describeError(error);
          record.timedOut = error instanceof Error && error.name === "TimeoutError";
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
  probing = false;
  await probe;
  const deadline = sendingMs + options.timeoutSeconds * 1000;
  const accepted = records.filter((r) => r.acceptedAt !== undefined);
  while (accepted.some((r) => r.includedAt === undefined) && now() < deadline)
    await sleep(RECEIPT_POLL_MS);
  const totalMs = now();
  const self = process.cpuUsage(cpuBefore.self);
  const cpuAfter = { service: processCpuSeconds(service.pid), anvil: anvilCpu() };
  const nodeRequestTally = await nodeRequests.tally();
  await watcher?.stop();

  const delta = (after: number | undefined, before: number | undefined) =>
    after === undefined || before === undefined
      ? undefined
      : Math.round((after - before) * 1000) / 1000;
  const idle = delta(idleTo, idleFrom);
  return {
    sendingMs,
    totalMs,
    chainIdMs,
    timedOut: accepted.some((r) => r.includedAt === undefined),
    cpuSeconds: {
      service: delta(cpuAfter.service, cpuBefore.service),
      anvil: delta(cpuAfter.anvil, cpuBefore.anvil),
      loadGenerator: Math.round((self.user + self.system) / 1000) / 1000,
    },
    nodeRequests: nodeRequestTally,
    serviceIdleCpuPerSecond:
      idle === undefined ? undefined : Math.round((idle / (IDLE_SAMPLE_MS / 1000)) * 1000) / 1000,
  };
}

function writeReport(report: Report, options: LoadOptions): string[] {
  const dir = resolve(options.out);
  mkdirSync(dir, { recursive: true });
  const name = `load-v${options.version}-${options.ops}ops-${options.accounts}accounts${options.estimate ? "-estimate" : ""}${options.retryBusy ? "-retry-busy" : ""}${options.receipts === "service" ? "-receipts" : ""}`;
  const json = join(dir, `${name}.json`);
  const md = join(dir, `${name}.md`);
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    md,
    `# Load: ${name}\n\n${summaryTable(report)}\n\nNode requests of the service per accepted operation (medians), counted at a proxy in front of anvil; node ms is the wall time from forwarding a request to its answer:\n\n${nodeRequestTable(report.results)}\n\nCommit ${report.commit ?? "unknown"}, ${report.machine.cpuModel ?? "unknown CPU"}, load average at start ${report.machine.loadAverageAtStart.join(" ")}.\n`,
  );
  return [json, md].map((file) => relative(process.cwd(), file));
}

runScript("bench", usage, main, () =>
  runningService ? ["last lines of the service:", ...runningService.tail()] : [],
);
