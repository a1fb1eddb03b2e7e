/**
 * Gas estimate accuracy: operations over workloads whose gas needs differ in kind, each sent with
 * the stand-alone service's own estimate unchanged, then traced on chain to see what each phase
 * used. See bench/README.md ("Gas estimate benchmark").
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { deployGasWorkloads, type EntryPointVersion, gasWorkloadsAbi, SIMPLE_7702_ACCOUNT, startDevnet } from "@bundlekit/devnet";
import { loadConfig, startBundlerService } from "@bundlekit/server";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, createPublicClient, createWalletClient, encodeFunctionData, type Hash, type Hex, http, isAddressEqual, numberToHex, parseEther, type PublicClient, type SignedAuthorization, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, type SmartAccount } from "viem/account-abstraction";
import { commandLine, gitCommit, machineFacts } from "./run-facts.ts";
import { cleanUp, exitWithUsageOnHelp, integerFlag, log, onCleanUp, runScript, UsageError } from "./script.ts";
import { distribution, quantile } from "./stats.ts";

const usage = `usage: pnpm bench:gas [--samples N] [--versions list] [--out DIR]

  --samples N      operations per workload and EntryPoint version (default 5)
  --versions list  comma-separated EntryPoint versions (default 0.6,0.7,0.8,0.9)
  --out DIR        where results go (default bench/results)`;

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];
/** The gas fields whose overestimate is measured: limit ÷ what the phase used on chain. */
const fields = ["verificationGasLimit", "callGasLimit", "paymasterVerificationGasLimit", "paymasterPostOpGasLimit"] as const;
type Field = (typeof fields)[number];

interface Workload {
  name: string;
  /** EntryPoint versions it applies to. */
  versions: readonly EntryPointVersion[];
  /** A fresh account each sample: counterfactual (deployed by the operation), or an EIP-7702 EOA. */
  account?: "counterfactual" | "eip7702";
  calls: (context: { workloads: Address; recipient: Address }) => { to: Address; value?: bigint; data?: Hex }[];
  /** postOp rounds for the devnet's PostOpWorkPaymaster, which sponsors the operation. */
  postOpRounds?: number;
}

const call = (workloads: Address, functionName: string, args: unknown[]) => ({ to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName, args }) });
const all = versions;
const workloads: Workload[] = [
  { name: "plain transfer", versions: all, calls: ({ recipient }) => [{ to: recipient, value: 1n }] },
  { name: "deploy + transfer", versions: all, account: "counterfactual", calls: ({ recipient }) => [{ to: recipient, value: 1n }] },
  { name: "4 KiB calldata", versions: all, calls: ({ workloads }) => [call(workloads, "consume", [toHex(randomBytes(4096))])] },
  { name: "16 KiB calldata", versions: all, calls: ({ workloads }) => [call(workloads, "consume", [toHex(randomBytes(16384))])] },
  { name: "loop of 10", versions: all, calls: ({ workloads }) => [call(workloads, "loop", [10n])] },
  { name: "loop of 1,000", versions: all, calls: ({ workloads }) => [call(workloads, "loop", [1000n])] },
  { name: "loop of 10,000", versions: all, calls: ({ workloads }) => [call(workloads, "loop", [10_000n])] },
  { name: "400,000 gas forwarded (63/64)", versions: all, calls: ({ workloads }) => [call(workloads, "requireGas", [400_000n])] },
  { name: "postOp of 300 rounds", versions: ["0.7", "0.8", "0.9"], postOpRounds: 300, calls: ({ recipient }) => [{ to: recipient, value: 0n }] },
  { name: "postOp of 3,000 rounds", versions: ["0.7", "0.8", "0.9"], postOpRounds: 3000, calls: ({ recipient }) => [{ to: recipient, value: 0n }] },
  { name: "EIP-7702 account", versions: ["0.8"], account: "eip7702", calls: ({ recipient }) => [{ to: recipient, value: 1n }] },
];

interface Sample {
  workload: string;
  version: EntryPointVersion;
  estimateMs: number;
  /** Limit and gas used on chain, per field the operation has. */
  gas: Partial<Record<Field, { limit: string; used: string; ratio: number }>>;
  /** Why the operation did not succeed with its estimate, if it did not. */
  failure?: string;
}

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      samples: { type: "string", default: "5" },
      versions: { type: "string", default: versions.join(",") },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean" },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  const chosen = values.versions.split(",").map((v) => v.trim());
  for (const v of chosen) if (!versions.includes(v as EntryPointVersion)) throw new UsageError(`--versions: unknown EntryPoint version "${v}" (0.6, 0.7, 0.8, 0.9)`);
  return { samples: integerFlag("samples", values.samples, 1), versions: chosen as EntryPointVersion[], out: values.out };
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const machine = machineFacts();
  const devnet = await startDevnet();
  onCleanUp(() => devnet.stop());
  const config = loadConfig({
    BUNDLEKIT_RPC_URL: devnet.rpcUrl,
    BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
    BUNDLEKIT_PORT: "0",
    BUNDLEKIT_DATABASE: ":memory:",
    BUNDLEKIT_BUNDLE_INTERVAL: "50",
    BUNDLEKIT_LOG_LEVEL: "warn",
    // The 16 KiB calldata workload is above ERC-7562's 8192-byte operation limit (LIM-010).
    BUNDLEKIT_MAX_USER_OPERATION_SIZE: "32768",
  });
  const service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl });
  onCleanUp(() => service.close());
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 50 }) as PublicClient;
  const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
  const fund = async (to: Address) => client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to, value: parseEther("1") }) });
  const context = { workloads: await deployGasWorkloads(devnet), recipient: privateKeyToAccount(generatePrivateKey()).address };
  log(`devnet at ${devnet.rpcUrl}, service at ${service.url}`);

  const samples: Sample[] = [];
  for (const version of options.versions) {
    const simpleAccount = async () => {
      const account = await toSimpleSmartAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), entryPoint: { address: devnet.deployments[version].entryPoint, version } });
      await fund(account.address);
      return account;
    };
    // One deployed account sends every workload that does not need a fresh one.
    const shared = await simpleAccount();
    const deployed = await send({ version, account: shared, calls: [{ to: context.recipient, value: 1n }] });
    if (deployed.failure) throw new Error(`could not deploy the v${version} account: ${deployed.failure}`);
    for (const workload of workloads.filter((w) => w.versions.includes(version))) {
      for (let i = 0; i < options.samples; i++) {
        let account: SmartAccount = shared;
        let authorization: SignedAuthorization | undefined;
        if (workload.account === "counterfactual") account = await simpleAccount();
        if (workload.account === "eip7702") ({ account, authorization } = await eip7702Account(version));
        const paymaster = workload.postOpRounds === undefined ? undefined : { address: devnet.deployments[version].paymasters.postOpWork!, data: numberToHex(workload.postOpRounds, { size: 4 }) };
        const sample = await send({ version, account, calls: workload.calls(context), authorization, paymaster });
        samples.push({ workload: workload.name, version, ...sample });
        log(`v${version} ${workload.name} #${i + 1}: ${sample.failure ?? Object.entries(sample.gas).map(([f, g]) => `${f} ×${g.ratio}`).join(", ")}`);
      }
    }
  }

  /** permissionless's Simple7702Account of a fresh funded EOA, and its signed delegation. */
  async function eip7702Account(version: EntryPointVersion) {
    const owner = privateKeyToAccount(generatePrivateKey());
    await fund(owner.address);
    const account = await toSimpleSmartAccount({ client, owner, eip7702: true, entryPoint: { address: devnet.deployments[version].entryPoint, version: "0.8" } });
    const authorization = await owner.signAuthorization({ contractAddress: SIMPLE_7702_ACCOUNT, chainId: devnet.chainId, nonce: await client.getTransactionCount({ address: owner.address }) });
    return { account, authorization };
  }

  /** Estimate (timed) and send with the estimate unchanged; then what each phase used on chain. */
  async function send(parameters: { version: EntryPointVersion; account: SmartAccount; calls: { to: Address; value?: bigint; data?: Hex }[]; authorization?: SignedAuthorization | undefined; paymaster?: { address: Address; data: Hex } | undefined }): Promise<Omit<Sample, "workload" | "version">> {
    const { account, calls, authorization, paymaster } = parameters;
    const bundler = createBundlerClient({ account, client, transport: http(service.url), pollingInterval: 50 });
    const sponsor = paymaster ? { paymaster: paymaster.address, paymasterData: paymaster.data } : {};
    const t0 = performance.now();
    let estimate: Awaited<ReturnType<typeof bundler.estimateUserOperationGas>>;
    try {
      estimate = await bundler.estimateUserOperationGas({ calls, authorization, ...sponsor } as never);
    } catch (error) {
      return { estimateMs: performance.now() - t0, gas: {}, failure: `estimate failed: ${(error as Error).message.split("\n")[0]}` };
    }
    const estimateMs = performance.now() - t0;
    try {
      const hash = await bundler.sendUserOperation({ calls, authorization, ...sponsor, ...estimate } as never);
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000 });
      const used = await gasUsedByPhase(client, receipt.receipt.transactionHash, parameters.version, account.entryPoint.address, receipt.sender, paymaster?.address);
      const gas: Sample["gas"] = {};
      for (const field of fields) {
        const limit = (estimate as Partial<Record<Field, bigint>>)[field];
        const phase = used[field];
        if (limit === undefined || !phase) continue;
        gas[field] = { limit: limit.toString(), used: phase.toString(), ratio: Math.round((Number(limit) / Number(phase)) * 1000) / 1000 };
      }
      return { estimateMs, gas, ...(receipt.success ? {} : { failure: `reverted on chain: ${(receipt as { reason?: string }).reason ?? "no reason"}` }) };
    } catch (error) {
      return { estimateMs, gas: {}, failure: `not included: ${(error as Error).message.split("\n")[0]}` };
    }
  }

  const report = {
    date: new Date().toISOString(),
    command: commandLine("bench:gas"),
    commit: gitCommit(),
    machine,
    parameters: { ...options, markupPercent: "the service's default estimationGasMarkupPercent", devnet: "anvil, one block per transaction" },
    summary: summarize(samples),
    samples,
  };
  mkdirSync(options.out, { recursive: true });
  const base = join(options.out, `gas-${options.samples}samples`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown(report));
  process.stdout.write(`${markdown(report)}\nresults: ${relative(process.cwd(), `${base}.json`)}, ${relative(process.cwd(), `${base}.md`)}\n`);
  await cleanUp();
  if (report.summary.failures > 0) process.exitCode = 1;
}

interface CallFrame {
  from: Address;
  to?: Address;
  gasUsed: Hex;
  calls?: CallFrame[];
}

/**
 * Gas each phase of the bundle transaction's only operation used, from the node's `callTracer`:
 * the EntryPoint's calls to the sender, its SenderCreator and the paymaster, told apart by where
 * they sit (validation at the top of `handleOps`, execution and postOp inside `innerHandleOp`).
 */
async function gasUsedByPhase(client: PublicClient, transactionHash: Hash, version: EntryPointVersion, entryPoint: Address, sender: Address, paymaster: Address | undefined): Promise<Partial<Record<Field, bigint>>> {
  const trace = (await client.request({ method: "debug_traceTransaction" as never, params: [transactionHash, { tracer: "callTracer" }] as never })) as CallFrame;
  const is = (frame: CallFrame, address: Address | undefined) => address !== undefined && frame.to !== undefined && isAddressEqual(frame.to, address);
  const used = (frames: CallFrame[]) => frames.reduce((sum, frame) => sum + BigInt(frame.gasUsed), 0n);
  const top = (trace.calls ?? []).filter((frame) => isAddressEqual(frame.from, entryPoint));
  const inner = top.filter((frame) => is(frame, entryPoint)).flatMap((frame) => frame.calls ?? []);
  const creation = top.filter((frame) => !is(frame, sender) && !is(frame, paymaster) && !is(frame, entryPoint) && (frame.calls ?? []).length > 0);
  const validation = top.filter((frame) => is(frame, sender)).slice(0, 1);
  const paymasterValidation = top.filter((frame) => is(frame, paymaster));
  const execution = inner.filter((frame) => is(frame, sender));
  const postOp = inner.filter((frame) => is(frame, paymaster));
  return {
    // v0.6 has no paymaster limits: its verificationGasLimit covers the paymaster's validation too.
    verificationGasLimit: used([...creation, ...validation, ...(version === "0.6" ? paymasterValidation : [])]),
    callGasLimit: used(execution),
    ...(paymaster && version !== "0.6" ? { paymasterVerificationGasLimit: used(paymasterValidation), paymasterPostOpGasLimit: used(postOp) } : {}),
  };
}

function summarize(samples: Sample[]) {
  const ratios = (field: Field, of: Sample[]) => of.flatMap((s) => (s.gas[field] ? [s.gas[field]!.ratio] : [])).sort((a, b) => a - b);
  const spread = (values: number[]) =>
    values.length === 0 ? undefined : { count: values.length, p50: round(quantile(values, 0.5)!), p95: round(quantile(values, 0.95)!), max: round(values.at(-1)!) };
  const byWorkload = [...new Set(samples.map((s) => `${s.workload} (v${s.version})`))].map((key) => {
    const of = samples.filter((s) => `${s.workload} (v${s.version})` === key);
    const p50s = Object.fromEntries(fields.map((f) => [f, quantile(ratios(f, of), 0.5)])) as Record<Field, number | undefined>;
    return { workload: key, failures: of.filter((s) => s.failure).length, ...p50s };
  });
  return {
    operations: samples.length,
    failures: samples.filter((s) => s.failure).length,
    failureReasons: samples.filter((s) => s.failure).map((s) => `${s.workload} (v${s.version}): ${s.failure}`),
    overestimate: Object.fromEntries(fields.map((f) => [f, spread(ratios(f, samples))])),
    estimateLatencyMs: distribution(samples.map((s) => s.estimateMs)),
    byWorkload,
  };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

function markdown(report: { command: string; commit: string | undefined; date: string; summary: ReturnType<typeof summarize> }): string {
  const { summary } = report;
  const cell = (value: number | undefined) => (value === undefined ? "–" : String(round(value)));
  const lines = [
    "# Gas estimate benchmark",
    "",
    `\`${report.command}\` at ${report.commit ?? "an unknown commit"}, ${report.date}.`,
    "",
    `${summary.operations} operations sent with the service's estimate unchanged; **${summary.failures} failed**. Estimate latency (one client, \`eth_estimateUserOperationGas\` round trip): p50 ${summary.estimateLatencyMs.p50} ms, p95 ${summary.estimateLatencyMs.p95} ms.`,
    "",
    "Overestimate, limit ÷ gas the phase used on chain:",
    "",
    "| field | operations | p50 | p95 | max |",
    "| --- | --- | --- | --- | --- |",
    ...fields.map((f) => {
      const s = summary.overestimate[f];
      return `| ${f} | ${s?.count ?? 0} | ${cell(s?.p50)} | ${cell(s?.p95)} | ${cell(s?.max)} |`;
    }),
    "",
    "Per workload, p50 of the overestimate:",
    "",
    `| workload | failures | ${fields.join(" | ")} |`,
    `| --- | --- | ${fields.map(() => "---").join(" | ")} |`,
    ...summary.byWorkload.map((w) => `| ${w.workload} | ${w.failures} | ${fields.map((f) => cell(w[f])).join(" | ")} |`),
    ...(summary.failureReasons.length > 0 ? ["", "Failures:", "", ...summary.failureReasons.map((r) => `- ${r}`)] : []),
  ];
  return `${lines.join("\n")}\n`;
}

runScript("bench:gas", usage, main);
