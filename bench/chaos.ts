/**
 * Chaos run of the stand-alone service: open-loop load on a devnet that mines a block every
 * second, the service killed with `kill -9` at random moments and restarted on the same database,
 * then the books settled from the chain. Two modes: one service on SQLite, and two services on one
 * PostgreSQL of which one is killed. Writes bench/results/chaos-<mode>-<ops>ops.json and .md and
 * exits 1 when an operation was lost, included twice, or is included but not served. See
 * bench/README.md.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import type { MempoolStore } from "@bundlekit/core";
import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { type ServiceProcess, startServiceProcess } from "@bundlekit/server";
import { createPostgresMempoolStore, createSqliteMempoolStore } from "@bundlekit/storage-kysely";
import pg from "pg";
import {
  type Address,
  createPublicClient,
  type Hash,
  type Hex,
  http,
  type PublicClient,
} from "viem";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { findOrStartPostgres } from "../test/postgres-server.ts";
import { prepareOperations, type SignedOperation, setUpAccounts } from "./accounts.ts";
import {
  type ChaosFigures,
  chaosFailures,
  type ServedOperation,
  type StoredOperation,
  tallyChaosRun,
} from "./chaos-accounting.ts";
import {
  type ChaosOptions,
  killTimes,
  type Mode,
  parseChaosOptions,
  usage,
} from "./chaos-options.ts";
import { loadGeneratorLimits } from "./load-generator-limits.ts";
import { commandLine, gitCommit, type MachineFacts, machineFacts } from "./run-facts.ts";
import { cleanUp, describeError, log, onCleanUp, runScript, sleep } from "./script.ts";
import { userOperationEvents, watchUserOperationEvents } from "./user-operation-events.ts";

/** At most this many accepted operations per account not yet on chain (ERC-7562 allows an unstaked sender 4). */
const QUEUE_DEPTH = 3;
const RETRY_MS = 250;
const POLL_MS = 500;
const VERSION = "0.7";

/** One service of the run, restarted on the same database and instance id after each kill. */
interface Instance {
  name: string;
  instanceId: string;
  relayerKeys: Hex[];
  service: ServiceProcess | undefined;
  /** Lines each life of the service logged at each level, summed. */
  logCounts: Record<string, number>;
  /** The last lines of each life that ended in a kill. */
  lastWords: string[][];
}

/** One operation's life as the client saw it. */
interface ChaosRecord extends SignedOperation {
  accepted: boolean;
  rejection?: string | undefined;
  /** Sends that got no answer (the service was down or died answering). */
  connectionFailures: number;
  /** `-32504` answers (the sender had 4 operations in the pool), retried. */
  throttled: number;
  onChain: boolean;
  /** Recorded `dropped` or `failed` by the service. */
  final: boolean;
}

interface KillRecord {
  atMs: number;
  instance: string;
  pid: number;
  /** How long until the restarted service answered; undefined when it was left down. */
  restartedInMs: number | undefined;
}

async function main() {
  const options = parseChaosOptions(process.argv.slice(2));
  if (options.logDir !== undefined) mkdirSync(options.logDir, { recursive: true });
  // Read before the first mode writes its results (which would mark the tree as changed).
  const run = { machine: machineFacts(), commit: gitCommit() };
  const failed: string[] = [];
  const summaries: string[] = [];
  for (const mode of options.modes) {
    log(
      `\n== chaos, ${mode} mode: ${options.ops} operations at ${options.rate}/s, ${options.kills} kills (seed ${options.seed})`,
    );
    const report = await runMode(mode, options, run);
    await cleanUp();
    const files = writeReport(report, options);
    summaries.push(`${summaryTable(report)}\n\nresults: ${files.join(", ")}`);
    const failures = chaosFailures(report.figures);
    if (failures.length > 0) failed.push(`${mode}: ${failures.join(", ")}`);
  }
  process.stdout.write(`\n${summaries.join("\n\n")}\n`);
  if (failed.length > 0) {
    process.stderr.write(`chaos: ${failed.join("; ")}\n`);
    process.exitCode = 1;
  }
}

type ChaosReport = Awaited<ReturnType<typeof runMode>>;

/** One mode on a fresh devnet and database: set up, load with kills, settle, count. */
async function runMode(
  mode: Mode,
  options: ChaosOptions,
  { machine, commit }: { machine: MachineFacts; commit: string | undefined },
) {
  const instanceCount = mode === "postgres" ? 2 : 1;
  const devnet = await startDevnet({
    relayerCount: options.relayers * instanceCount,
    blockTime: options.blockTime,
  });
  onCleanUp(() => devnet.stop());
  const database = mode === "postgres" ? await freshPostgresSchema(options.database) : sqliteFile();
  const instances: Instance[] = Array.from({ length: instanceCount }, (_, index) => ({
    name: mode === "postgres" ? `instance ${"ab"[index]}` : "service",
    instanceId: `chaos-${mode}-${index}`,
    relayerKeys: devnet.relayerKeys.slice(index * options.relayers, (index + 1) * options.relayers),
    service: undefined,
    logCounts: {},
    lastWords: [],
  }));
  for (const instance of instances) await start(instance, devnet, database, options);
  const victim = instances[0]!;

  const client = createPublicClient({
    chain: devnet.chain,
    transport: http(devnet.rpcUrl),
    pollingInterval: 50,
  }) as PublicClient;
  const bundler = createBundlerClient({
    client,
    transport: http(victim.service!.url, { retryCount: 0, timeout: 120_000 }),
  });
  log(`setup: funding and deploying ${options.accounts} SimpleAccounts (v${VERSION})`);
  const accounts = await setUpAccounts(devnet, client, bundler, devnet.chain, {
    ...options,
    version: VERSION,
  });
  const entryPoint = accounts[0]!.entryPoint.address;
  log(`setup: signing ${options.ops} operations`);
  const records: ChaosRecord[] = (
    await prepareOperations(accounts, bundler, devnet.chainId, { ...options, version: VERSION })
  ).map((op) => ({
    ...op,
    accepted: false,
    connectionFailures: 0,
    throttled: 0,
    onChain: false,
    final: false,
  }));
  const store = await openStore(database);
  onCleanUp(() => store.close?.() ?? Promise.resolve());

  const startBlock = await client.getBlockNumber({ cacheTime: 0 });
  const byHash = new Map(records.map((r) => [r.hash, r]));
  const watcher = watchUserOperationEvents({
    client,
    entryPoint,
    after: startBlock,
    pollMs: POLL_MS,
    onEvents(events) {
      for (const event of events) {
        const record = byHash.get(event.userOpHash);
        if (record) record.onChain = true;
      }
    },
    onError: (error) => log(`event watcher: ${describeError(error)} (retrying)`),
  });

  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const kills: KillRecord[] = [];
  const schedule = killTimes(options);
  log(
    `load: ${options.ops} operations from ${options.accounts} accounts at ${options.rate}/s; kills at ${schedule.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")}`,
  );
  const killer = (async () => {
    for (const [index, atMs] of schedule.entries()) {
      await sleep(Math.max(0, atMs - now()));
      const service = victim.service!;
      addLogCounts(victim);
      victim.service = undefined;
      victim.lastWords.push(service.tail().slice(-5));
      await service.kill();
      const killedAt = now();
      // Two services: the last kill is for good, and the survivor takes over once the leases lapse.
      const restart = !(mode === "postgres" && index === schedule.length - 1);
      if (restart) await start(victim, devnet, database, options);
      kills.push({
        atMs: Math.round(killedAt),
        instance: victim.name,
        pid: service.pid,
        restartedInMs: restart ? Math.round(now() - killedAt) : undefined,
      });
      log(
        `kill ${index + 1}: ${victim.name} (pid ${service.pid}) at ${(killedAt / 1000).toFixed(1)} s${restart ? `, back after ${kills.at(-1)!.restartedInMs} ms` : ", left down"}`,
      );
    }
  })();
  await Promise.all([sendLoad(records, instances, entryPoint, options, now), killer]);
  const sendingMs = now();
  log(
    `load: sent in ${(sendingMs / 1000).toFixed(1)} s; waiting for every accepted operation to settle`,
  );

  // Settled: every accepted operation on chain or recorded dropped, and every operation on chain
  // served by the live services (the survivor serves the dead one's only once it adopted them).
  const settleBy = now() + options.timeoutSeconds * 1000;
  const live = instances.filter((instance) => instance.service !== undefined);
  const served = new Map<Hash, ServedOperation>();
  const unsettled = () => records.filter((r) => r.accepted && !r.onChain && !r.final);
  const unserved = () => records.filter((r) => r.onChain && !isServed(served.get(r.hash)));
  for (;;) {
    for (const record of unsettled()) {
      const status = (await store.get(record.hash))?.status;
      record.final = status === "dropped" || status === "failed";
    }
    for (const [hash, answer] of await servedByAll(
      unserved().map((r) => r.hash),
      live,
    ))
      served.set(hash, answer);
    if ((unsettled().length === 0 && unserved().length === 0) || now() >= settleBy) break;
    await sleep(2_000);
  }
  const settledMs = now();
  await watcher.stop();

  const events = await userOperationEvents(client, entryPoint, startBlock + 1n);
  const onChain = new Set(events.map((event) => event.userOpHash));
  const lateOnChain = records
    .filter((r) => onChain.has(r.hash) && !served.has(r.hash))
    .map((r) => r.hash);
  for (const [hash, answer] of await servedByAll(lateOnChain, live)) served.set(hash, answer);
  log(`settled after ${(settledMs / 1000).toFixed(1)} s: ${onChain.size} operations on chain`);
  const stored = new Map<Hash, StoredOperation>();
  for (const record of records) {
    const entry = await store.get(record.hash);
    if (entry)
      stored.set(record.hash, { status: entry.status, failureReason: entry.failureReason });
  }
  const figures = tallyChaosRun({ offered: records, events, stored, served });
  for (const instance of instances) addLogCounts(instance);

  const { out: _out, modes: _modes, database: _database, logDir: _logDir, ...parameters } = options;
  return {
    date: new Date().toISOString(),
    command: commandLine("chaos"),
    commit,
    machine,
    mode,
    parameters: {
      ...parameters,
      version: VERSION,
      services:
        mode === "postgres"
          ? "two packages/server processes on one PostgreSQL schema, each with its own relayer keys and instance id; the first is killed, restarted after each kill but the last"
          : "one packages/server process on a SQLite file, restarted after each kill",
      client: `each account's operations in nonce order, the next once the previous is accepted, at most ${QUEUE_DEPTH} not yet on chain; a send that gets no answer is sent again (to the other service when there are two), and "already known" then counts as accepted; -32504 is retried`,
    },
    figures,
    kills,
    timing: {
      sendingSeconds: round(sendingMs / 1000),
      settledSeconds: round(settledMs / 1000),
      unsettledAtTimeout: unsettled().length,
      unservedAtTimeout: unserved().length,
    },
    client: {
      connectionFailures: sum(records.map((r) => r.connectionFailures)),
      acceptedAfterConnectionFailure: records.filter((r) => r.accepted && r.connectionFailures > 0)
        .length,
      throttledAnswers: sum(records.map((r) => r.throttled)),
    },
    services: instances.map((instance) => ({
      name: instance.name,
      instanceId: instance.instanceId,
      logLines: instance.logCounts,
      lastLinesBeforeKills: instance.lastWords,
    })),
  };
}

/** Start (or restart) an instance's service on the run's database; resolves once it serves. */
async function start(instance: Instance, devnet: Devnet, database: string, options: ChaosOptions) {
  addLogCounts(instance);
  const service = await startServiceProcess({
    rpcUrl: devnet.rpcUrl,
    relayerKeys: instance.relayerKeys,
    database,
    env: {
      BUNDLEKIT_INSTANCE_ID: instance.instanceId,
      BUNDLEKIT_BUNDLE_CLAIM_LEASE_MS: options.leaseMs?.toString(),
      BUNDLEKIT_LOG_LEVEL: process.env.BUNDLEKIT_LOG_LEVEL,
      ...loadGeneratorLimits(options.accounts),
    },
    onLine:
      options.logDir === undefined
        ? undefined
        : (line) =>
            appendFileSync(join(options.logDir!, `${instance.instanceId}.log`), `${line}\n`),
  });
  onCleanUp(() => service.stop());
  instance.service = service;
  log(`${instance.name}: pid ${service.pid} at ${service.url}`);
}

/** Fold the log counts of the instance's current (or last) life into its totals, once. */
const counted = new WeakSet<ServiceProcess>();
function addLogCounts(instance: Instance) {
  const service = instance.service;
  if (!service || counted.has(service)) return;
  counted.add(service);
  for (const [level, count] of Object.entries(service.logCounts))
    instance.logCounts[level] = (instance.logCounts[level] ?? 0) + count;
}

/**
 * The load: one lane per account, its operations in nonce order, each due at its place in the
 * open-loop schedule (accounts in turn) and sent once the previous one is accepted. Account i
 * sends to service i mod n, or to any live one while that one is down. A lane that cannot go on
 * for `--timeout` seconds past the schedule gives up, and says why.
 */
async function sendLoad(
  records: ChaosRecord[],
  instances: Instance[],
  entryPoint: Address,
  options: ChaosOptions,
  now: () => number,
) {
  const lanes = Array.from({ length: options.accounts }, (_, i) =>
    records.filter((r) => r.account === i),
  );
  const dueAt = new Map<ChaosRecord, number>();
  let position = 0;
  for (let depth = 0; depth < Math.max(...lanes.map((lane) => lane.length)); depth++) {
    for (const lane of lanes)
      if (lane[depth]) dueAt.set(lane[depth]!, (position++ * 1000) / options.rate);
  }
  const giveUpAt = (records.length / options.rate + options.timeoutSeconds) * 1000;
  const pickService = (lane: number) => {
    const preferred = instances[lane % instances.length]!;
    return (
      preferred.service ?? instances.find((instance) => instance.service !== undefined)?.service
    );
  };
  await Promise.all(
    lanes.map(async (lane, laneIndex) => {
      for (const record of lane) {
        await sleep(Math.max(0, dueAt.get(record)! - now()));
        while (
          lane.filter((r) => r.accepted && !r.onChain).length >= QUEUE_DEPTH &&
          now() < giveUpAt
        )
          await sleep(RETRY_MS);
        for (;;) {
          if (now() >= giveUpAt) {
            record.rejection =
              "not sent: no acceptance, or the account's earlier operations not on chain, within --timeout";
            break;
          }
          const service = pickService(laneIndex);
          const answer = service
            ? await sendUserOperation(service.url, record, entryPoint)
            : { unanswered: "no service up" };
          if ("hash" in answer) {
            record.accepted = answer.hash === record.hash;
            if (!record.accepted) record.rejection = `the service returned hash ${answer.hash}`;
            break;
          }
          if ("unanswered" in answer) {
            record.connectionFailures++;
          } else if (answer.code === -32602 && answer.data?.userOpHash === record.hash) {
            record.accepted = true; // a resend of an operation the service had kept before it died
            break;
          } else if (answer.code === -32504) {
            record.throttled++;
          } else {
            record.rejection = `${answer.code}: ${answer.message}`;
            break;
          }
          await sleep(RETRY_MS);
        }
        // A refused nonce leaves a gap: the account's later operations could only fail.
        if (!record.accepted) break;
      }
    }),
  );
}

type SendAnswer =
  | { hash: Hash }
  | { unanswered: string }
  | { code: number; message: string; data?: { userOpHash?: Hash } };

/** `eth_sendUserOperation` over plain HTTP: the hash, the JSON-RPC error, or no answer at all. */
async function sendUserOperation(
  url: string,
  record: SignedOperation,
  entryPoint: Address,
): Promise<SendAnswer> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sendUserOperation",
    params: [formatUserOperationRequest(record.op), entryPoint],
  });
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(60_000),
    });
    const answer = (await response.json()) as {
      result?: Hash;
      error?: { code: number; message: string; data?: { userOpHash?: Hash } };
    };
    return answer.result
      ? { hash: answer.result }
      : answer.error
        ? answer.error
        : { unanswered: `HTTP ${response.status} without a result` };
  } catch (error) {
    return { unanswered: describeError(error) };
  }
}

const isServed = (answer: ServedOperation | undefined) => answer?.receipt === true && answer.lookup;

/** For each hash: whether every live service serves its receipt and its lookup with a transaction. */
async function servedByAll(hashes: Hash[], live: Instance[]): Promise<Map<Hash, ServedOperation>> {
  const served = new Map<Hash, ServedOperation>();
  const queue = [...hashes];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let hash = queue.shift(); hash !== undefined; hash = queue.shift()) {
        const answers = await Promise.all(
          live.map(async (instance) => {
            const url = instance.service!.url;
            const [receipt, lookup] = await Promise.all([
              rpc(url, "eth_getUserOperationReceipt", [hash]).catch(() => null),
              rpc(url, "eth_getUserOperationByHash", [hash]).catch(() => null),
            ]);
            return {
              receipt: receipt !== null,
              lookup: (lookup as { transactionHash?: Hash } | null)?.transactionHash != null,
            };
          }),
        );
        served.set(hash, {
          receipt: answers.every((a) => a.receipt),
          lookup: answers.every((a) => a.lookup),
        });
      }
    }),
  );
  return served;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result ?? null;
}

function sqliteFile(): string {
  const directory = mkdtempSync(join(os.tmpdir(), "bundlekit-chaos-"));
  onCleanUp(async () => rmSync(directory, { recursive: true, force: true }));
  return join(directory, "mempool.sqlite");
}

/** A fresh schema on the PostgreSQL server, dropped at the end; its URL names it as the search path. */
async function freshPostgresSchema(given: string | undefined): Promise<string> {
  const server = await findOrStartPostgres(given === undefined ? {} : { url: given });
  onCleanUp(() => server.stop());
  const schema = `bundlekit_chaos_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Pool({ connectionString: server.url, max: 1 });
  await admin.query(`create schema ${schema}`);
  onCleanUp(async () => {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });
  const url = new URL(server.url);
  url.searchParams.set("options", `-c search_path=${schema}`);
  log(`database: schema ${schema} on ${url.host}`);
  return url.href;
}

/** The run's mempool store, read by this script to learn what the services recorded. */
function openStore(database: string): Promise<MempoolStore> {
  return database.startsWith("postgres")
    ? createPostgresMempoolStore({
        pool: new pg.Pool({ connectionString: database, max: 2 }),
        migrate: false,
      })
    : createSqliteMempoolStore({ filename: database, migrate: false });
}

const round = (value: number) => Math.round(value * 10) / 10;
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** The figures of one mode as a markdown table, with the reasons and the command. */
function summaryTable(report: ChaosReport): string {
  const f: ChaosFigures = report.figures;
  const reasons = (list: { reason: string; count: number }[]) =>
    list.length === 0 ? "" : ` (${list.map((r) => `${r.count}× ${r.reason}`).join("; ")})`;
  const rows: [string, string][] = [
    ["operations offered / accepted", `${f.offered} / ${f.accepted}`],
    ["rejected", `${f.rejected.count}${reasons(f.rejected.reasons)}`],
    ["included on chain (reverted)", `${f.included} (${f.includedReverted})`],
    ["included though not acknowledged", String(f.includedNotAccepted)],
    ["dropped", `${f.dropped.count}${reasons(f.dropped.reasons)}`],
    ["**lost**", `${f.lost.count}${reasons(f.lost.reasons)}`],
    ["**included twice**", String(f.includedTwice)],
    ["**receipt missing**", String(f.receiptMissing)],
    ["**lookup missing**", String(f.lookupMissing)],
    [
      "kills (restarted in ms)",
      `${report.kills.length} (${report.kills.map((k) => k.restartedInMs ?? "left down").join(", ")})`,
    ],
    [
      "sends without an answer / accepted on resend",
      `${report.client.connectionFailures} / ${report.client.acceptedAfterConnectionFailure}`,
    ],
    ["wall s: load / settled", `${report.timing.sendingSeconds} / ${report.timing.settledSeconds}`],
  ];
  const p = report.parameters;
  return [
    `### ${report.mode}`,
    "",
    "| figure | value |",
    "| --- | --- |",
    ...rows.map(([name, value]) => `| ${name} | ${value} |`),
    "",
    `\`${report.command}\` — ${report.mode} mode, EntryPoint v${p.version}, ${p.ops} ops from ${p.accounts} accounts offered at ${p.rate}/s, a block every ${p.blockTime} s, ` +
      `${p.kills} kills (seed ${p.seed}), ${p.relayers} relayers per service; commit ${report.commit ?? "unknown"}; ` +
      `${report.machine.cores} cores, Node ${report.machine.node}, ${report.date.slice(0, 10)}`,
  ].join("\n");
}

function writeReport(report: ChaosReport, options: ChaosOptions): string[] {
  const dir = resolve(options.out);
  mkdirSync(dir, { recursive: true });
  const name = `chaos-${report.mode}-${options.ops}ops`;
  const json = join(dir, `${name}.json`);
  const md = join(dir, `${name}.md`);
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(md, `# Chaos: ${name}\n\n${summaryTable(report)}\n`);
  return [json, md].map((file) => relative(process.cwd(), file));
}

runScript("chaos", usage, main);
