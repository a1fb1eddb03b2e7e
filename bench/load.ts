/**
 * Load benchmark of the stand-alone service: N user operations from M SimpleAccounts on the
 * devnet. Measures accepted ops/s, send latency, time to receipt and the service's CPU seconds
 * per operation, and writes bench/results/<name>.json and .md. See bench/README.md.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  type Devnet,
  type EntryPointVersion,
  resolveAnvilBinary,
  startDevnet,
  toSimpleAccount,
} from "@bundlekit/devnet";
import {
  type Address,
  concatHex,
  createPublicClient,
  createWalletClient,
  type Chain,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseAbiItem,
  parseEther,
  type PublicClient,
  stringToHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  createBundlerClient,
  formatUserOperationRequest,
  getUserOperationHash,
  type SmartAccount,
  type UserOperation,
} from "viem/account-abstraction";
import { findChildPid, processCpuSeconds } from "./proc.ts";
import { type ServiceProcess, startServiceProcess } from "./service-process.ts";
import { type Distribution, distribution, medianOf } from "./stats.ts";

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
interface OpRecord {
  account: number;
  nonce: bigint;
  hash: Hash;
  op: UserOperation;
  sentAt?: number;
  acceptedAt?: number;
  error?: string;
  includedAt?: number;
  success?: boolean;
  transactionHash?: Hash;
}

const userOperationEvent = parseAbiItem(
  "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)",
);
const RECEIPT_POLL_MS = 25;
const IDLE_SAMPLE_MS = 1000;
const ACCOUNT_FUNDS = parseEther("1");
/** Accounts deployed at once during setup, well under the factory's ERC-7562 throttling threshold. */
const DEPLOYMENT_WAVE = 50;

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
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const integer = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${name} must be an integer of at least ${min}, got "${value}"`);
    return n;
  };
  if (!["0.6", "0.7", "0.8"].includes(values.version))
    throw new UsageError(`--version must be 0.6, 0.7 or 0.8, got "${values.version}"`);
  const ops = integer("ops", values.ops, 1);
  const accounts = integer("accounts", values.accounts, 1);
  if (accounts > ops)
    throw new UsageError(`--accounts (${accounts}) must not exceed --ops (${ops})`);
  return {
    ops,
    accounts,
    version: values.version as EntryPointVersion,
    concurrency: integer("concurrency", values.concurrency ?? String(accounts), 1),
    relayers: integer("relayers", values.relayers, 1),
    rate: values.rate === undefined ? undefined : integer("rate", values.rate, 1),
    blockTime: values["block-time"] === undefined ? undefined : integer("block-time", values["block-time"], 1),
    bundleInterval: values["bundle-interval"] === undefined ? undefined : integer("bundle-interval", values["bundle-interval"], 10),
    bundleSize: values["bundle-size"] === undefined ? undefined : integer("bundle-size", values["bundle-size"], 1),
    queueDepth: integer("queue-depth", values["queue-depth"], 0),
    runs: integer("runs", values.runs, 1),
    timeoutSeconds: integer("timeout", values.timeout, 1),
    out: values.out,
  };
}

class UsageError extends Error {}

/** The running service, whose last log lines explain a failed run. */
let runningService: ServiceProcess | undefined;

/** Everything started for a run, stopped in reverse on success, error or a signal. */
const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp() {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

/** Set by a signal: the run's own failure that follows (its service gone) is not an error to report. */
let interrupted = false;

async function main() {
  const options = parseOptions(process.argv.slice(2));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      interrupted = true;
      process.stderr.write(`\n${signal}: stopping the service and the devnet\n`);
      void cleanUp().then(() => process.exit(130));
    });
  }
  const machine = machineFacts();
  const runs: RunResults[] = [];
  for (let run = 1; run <= options.runs; run++) {
    if (options.runs > 1) log(`run ${run} of ${options.runs}`);
    runs.push(await runOnce(options));
  }
  const { out: _out, ...parameters } = options;
  const report = {
    date: new Date().toISOString(),
    command: commandLine(),
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
  const devnet = await startDevnet({ relayerCount: options.relayers, blockTime: options.blockTime });
  cleanups.push(() => devnet.stop());
  const anvilPid = findChildPid(process.pid, "anvil");
  log(`devnet: anvil pid ${anvilPid ?? "unknown"} at ${devnet.rpcUrl}`);

  const dataDir = mkdtempSync(join(os.tmpdir(), "bundlekit-bench-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const service = await startServiceProcess({
    rpcUrl: devnet.rpcUrl,
    relayerKeys: devnet.relayerKeys,
    database: join(dataDir, "mempool.sqlite"),
    bundleInterval: options.bundleInterval,
    bundleSize: options.bundleSize,
  });
  runningService = service;
  cleanups.push(() => service.stop());
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

function log(message: string) {
  process.stderr.write(`${message}\n`);
}

type BundlerClient = ReturnType<typeof createBundlerClient>;
type Gas = Pick<
  UserOperation,
  | "callGasLimit"
  | "verificationGasLimit"
  | "preVerificationGas"
  | "maxFeePerGas"
  | "maxPriorityFeePerGas"
>;

/**
 * M funded SimpleAccounts with deterministic owners, deployed before the clock starts by each
 * one's first operation (nonce 0, with the factory) through the service. Deployment goes through
 * the bundler because the v0.8 factory accepts calls only from the EntryPoint's SenderCreator, and
 * because an operation queued behind an undeployed account's first one cannot be simulated.
 */
async function setUpAccounts(
  devnet: Devnet,
  client: PublicClient,
  bundler: BundlerClient,
  chain: Chain,
  options: LoadOptions,
) {
  const funder = createWalletClient({
    chain,
    transport: http(devnet.rpcUrl),
    account: privateKeyToAccount(devnet.accountKeys[0]!),
  });
  const owners = Array.from({ length: options.accounts }, (_, i) =>
    privateKeyToAccount(keccak256(stringToHex(`bundlekit bench owner ${i}`))),
  );
  const accounts = await Promise.all(
    owners.map((owner) => toSimpleAccount({ client, owner, version: options.version })),
  );

  let nonce = await client.getTransactionCount({
    address: funder.account.address,
    blockTag: "pending",
  });
  const funding: Hash[] = [];
  for (const account of accounts)
    funding.push(
      await funder.sendTransaction({
        to: account.address,
        value: ACCOUNT_FUNDS,
        nonce: nonce++,
        gas: 21_000n,
        chain,
      }),
    );
  for (const hash of funding) {
    if ((await client.waitForTransactionReceipt({ hash })).status !== "success")
      throw new Error(`funding transaction ${hash} reverted`);
  }

  // In waves: ERC-7562 throttles a factory whose operations are seen far faster than included.
  const gas = await estimateOnce(bundler, accounts[0]!, 0n, options.version);
  for (let start = 0; start < accounts.length; start += DEPLOYMENT_WAVE) {
    const deployments = await Promise.all(
      accounts.slice(start, start + DEPLOYMENT_WAVE).map(async (account) => {
        const { op } = await signedOperation(account, 0n, gas, devnet.chainId, options.version);
        return bundler.request({
          method: "eth_sendUserOperation",
          params: [formatUserOperationRequest(op), account.entryPoint.address],
        });
      }),
    );
    for (const hash of deployments) {
      const receipt = await bundler.waitForUserOperationReceipt({
        hash,
        pollingInterval: 100,
        timeout: 120_000,
      });
      if (!receipt.success) throw new Error(`the deployment operation ${hash} reverted`);
    }
  }
  return accounts;
}

/** An operation of `account` moving 1 wei to an address of its own, with the factory while undeployed (nonce 0). */
async function draftOperation(account: SmartAccount, nonce: bigint, version: EntryPointVersion) {
  const callData = await account.encodeCalls([
    { to: keccak256(account.address).slice(0, 42) as Address, value: 1n },
  ]);
  const { factory, factoryData } = nonce === 0n ? await account.getFactoryArgs() : {};
  return version === "0.6"
    ? {
        sender: account.address,
        nonce,
        initCode: factory ? concatHex([factory, factoryData!]) : "0x",
        callData,
        paymasterAndData: "0x" as Hex,
      }
    : { sender: account.address, nonce, ...(factory ? { factory, factoryData } : {}), callData };
}

/**
 * Gas limits and fees from one `eth_estimateUserOperationGas`, reused for every operation of the
 * same shape: all accounts are alike, so one estimate of the first account fits them all.
 */
async function estimateOnce(
  bundler: BundlerClient,
  account: SmartAccount,
  nonce: bigint,
  version: EntryPointVersion,
): Promise<Gas> {
  const stub = {
    ...(await draftOperation(account, nonce, version)),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    signature: await account.getStubSignature(),
  } as UserOperation;
  const estimate = (await bundler.request({
    method: "eth_estimateUserOperationGas",
    params: [formatUserOperationRequest(stub), account.entryPoint.address],
  })) as unknown as Record<string, Hex>;
  return {
    callGasLimit: BigInt(estimate.callGasLimit!),
    verificationGasLimit: BigInt(estimate.verificationGasLimit!),
    preVerificationGas: BigInt(estimate.preVerificationGas!),
    // Twice the suggested fee: headroom should the base fee rise during the run.
    maxFeePerGas: BigInt(estimate.maxFeePerGas!) * 2n,
    maxPriorityFeePerGas: BigInt(estimate.maxPriorityFeePerGas!),
  };
}

async function signedOperation(
  account: SmartAccount,
  nonce: bigint,
  gas: Gas,
  chainId: number,
  version: EntryPointVersion,
) {
  const unsigned = {
    ...(await draftOperation(account, nonce, version)),
    ...gas,
    signature: "0x" as Hex,
  } as UserOperation;
  const op = {
    ...unsigned,
    signature: await account.signUserOperation({ ...(unsigned as object), chainId } as never),
  } as UserOperation;
  const hash = getUserOperationHash({
    userOperation: op,
    entryPointAddress: account.entryPoint.address,
    entryPointVersion: version,
    chainId,
  });
  return { op, hash };
}

/** Every timed operation (nonces 1, 2, … of each deployed account), signed before the clock starts. */
async function prepareOperations(
  accounts: SmartAccount[],
  bundler: BundlerClient,
  chainId: number,
  options: LoadOptions,
) {
  const gas = await estimateOnce(bundler, accounts[0]!, 1n, options.version);
  const records: OpRecord[] = [];
  for (const [index, account] of accounts.entries()) {
    const count =
      Math.floor(options.ops / options.accounts) + (index < options.ops % options.accounts ? 1 : 0);
    for (let nonce = 1n; nonce <= BigInt(count); nonce++) {
      records.push({
        account: index,
        nonce,
        ...(await signedOperation(account, nonce, gas, chainId, options.version)),
      });
    }
  }
  return records;
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

  let lastBlock = await client.getBlockNumber({ cacheTime: 0 });
  const anvilCpu = () => (anvilPid === undefined ? undefined : processCpuSeconds(anvilPid));
  const idleFrom = processCpuSeconds(service.pid);
  await sleep(IDLE_SAMPLE_MS);
  const idleTo = processCpuSeconds(service.pid);
  const cpuBefore = { service: idleTo, anvil: anvilCpu(), self: process.cpuUsage() };
  const t0 = performance.now();
  const now = () => performance.now() - t0;

  let watching = true;
  const watcher = (async () => {
    while (watching) {
      try {
        const head = await client.getBlockNumber({ cacheTime: 0 });
        if (head > lastBlock) {
          const logs = await client.getLogs({
            address: entryPoint,
            event: userOperationEvent,
            fromBlock: lastBlock + 1n,
            toBlock: head,
          });
          const seenAt = now();
          for (const entry of logs) {
            const record = byHash.get(entry.args.userOpHash!);
            if (!record || record.includedAt !== undefined) continue;
            record.includedAt = seenAt;
            record.success = entry.args.success!;
            record.transactionHash = entry.transactionHash;
          }
          lastBlock = head;
          if (logs.length > 0) wake();
        }
      } catch (error) {
        log(`receipt watcher: ${describeError(error)} (retrying)`);
      }
      await sleep(RECEIPT_POLL_MS);
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

  // Open loop: the i-th operation (accounts in turn) is due at i / rate seconds.
  const dueAt = new Map<OpRecord, number>();
  if (options.rate !== undefined) {
    const longest = Math.max(...lanes.map((lane) => lane.length));
    let i = 0;
    for (let position = 0; position < longest; position++) {
      for (const lane of lanes) if (lane[position]) dueAt.set(lane[position]!, (i++ * 1000) / options.rate);
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
  watching = false;
  await watcher;

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

function describeError(error: unknown): string {
  const e = error as { code?: number; details?: string; shortMessage?: string; message?: string };
  const text = (e.details ?? e.shortMessage ?? e.message ?? String(error)).split("\n")[0]!;
  return e.code === undefined ? text : `${e.code}: ${text}`;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function machineFacts() {
  const cpus = os.cpus();
  const run = (file: string, args: string[]) => {
    try {
      return execFileSync(file, args, {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
    } catch {
      return undefined;
    }
  };
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    anvil: run(resolveAnvilBinary(), ["--version"])?.split("\n")[0],
    loadAverageAtStart: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

/** The command that reproduces this run, as it was typed (through `pnpm bench` or node directly). */
function commandLine(): string {
  const args = process.argv.slice(2).join(" ");
  if (process.env.npm_lifecycle_event === "bench") return `pnpm bench${args ? ` ${args}` : ""}`;
  const script = relative(process.cwd(), process.argv[1]!);
  return ["node", ...process.execArgv, script, ...process.argv.slice(2)].join(" ");
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
  machine: ReturnType<typeof machineFacts>;
  parameters: Omit<LoadOptions, "out"> & Record<string, unknown>;
  results: RunResults;
  runs: RunResults[];
}

function gitCommit(): string | undefined {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return undefined;
  }
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

main().catch(async (error) => {
  if (interrupted) return; // the signal handler stops everything and exits 130
  process.stderr.write(
    `bench: ${error instanceof UsageError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  if (error instanceof UsageError) process.stderr.write(`${usage}\n`);
  if (runningService)
    process.stderr.write(`last lines of the service:\n${runningService.tail().join("\n")}\n`);
  await cleanUp();
  process.exit(error instanceof UsageError ? 2 : 1);
});
