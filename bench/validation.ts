/**
 * Validation throughput: how many operations per second one bundler process validates, and the
 * CPU each validation costs the bundler and the node, per validation mode and tracer. See
 * bench/README.md ("Validation benchmark").
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import {
  type ValidationSettings,
  type ChainClient,
  createEntryPointRegistry,
  createSimulator,
  defaultBundlerSettings,
  type UserOperation,
  validateUserOperation,
} from "@bundlekit/core";
import { type EntryPointVersion, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, createWalletClient, http, keccak256, parseEther, parseGwei, stringToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { findChildPid, processCpuSeconds } from "./proc.ts";
import { commandLine, gitCommit, machineFacts } from "./run-facts.ts";
import { exitWithUsageOnHelp, integerFlag, log, onCleanUp, runScript, UsageError } from "./script.ts";
import { distribution, medianOf } from "./stats.ts";

const usage = `usage: pnpm bench:validation [--ops N] [--concurrency C] [--runs R] [--version 0.6|0.7|0.8|0.9] [--modes list] [--out DIR]

  --ops N          validations per mode and run (default 200)
  --concurrency C  validations in flight at once (default 8)
  --runs R         repetitions; figures are medians (default 3)
  --version V      EntryPoint version (default 0.7)
  --modes list     comma-separated: unsafe, in-process (2 workers), in-process-inline (no workers),
                   js (the node's JavaScript tracer) (default all)
  --out DIR        where results go (default bench/results)`;

const modes = {
  unsafe: { mode: "unsafe", tracer: "in-process", tracerWorkers: 0 },
  "in-process": { mode: "safe", tracer: "in-process", tracerWorkers: 2 },
  "in-process-inline": { mode: "safe", tracer: "in-process", tracerWorkers: 0 },
  js: { mode: "safe", tracer: "js", tracerWorkers: 0 },
} as const satisfies Record<string, Pick<ValidationSettings, "mode" | "tracer" | "tracerWorkers">>;
type Mode = keyof typeof modes;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      ops: { type: "string", default: "200" },
      concurrency: { type: "string", default: "8" },
      runs: { type: "string", default: "3" },
      version: { type: "string", default: "0.7" },
      modes: { type: "string", default: Object.keys(modes).join(",") },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean" },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  if (!["0.6", "0.7", "0.8", "0.9"].includes(values.version)) throw new UsageError(`--version must be 0.6, 0.7, 0.8 or 0.9, got "${values.version}"`);
  const chosen = values.modes.split(",").map((m) => m.trim());
  for (const mode of chosen) if (!(mode in modes)) throw new UsageError(`--modes: unknown mode "${mode}" (${Object.keys(modes).join(", ")})`);
  return {
    ops: integerFlag("ops", values.ops, 1),
    concurrency: integerFlag("concurrency", values.concurrency, 1),
    runs: integerFlag("runs", values.runs, 1),
    version: values.version as EntryPointVersion,
    modes: chosen as Mode[],
    out: values.out,
  };
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const machine = machineFacts();
  const devnet = await startDevnet();
  onCleanUp(() => devnet.stop());
  const anvilPid = findChildPid(process.pid, "anvil");
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) }) as unknown as ChainClient;
  log(`devnet at ${devnet.rpcUrl} (anvil pid ${anvilPid ?? "unknown"}); preparing ${options.ops} operations`);
  const ops = await prepareOperations(devnet, client, options);
  const entryPoint = createEntryPointRegistry().get(devnet.deployments[options.version].entryPoint);

  const results: Record<string, unknown> = {};
  for (const mode of options.modes) {
    const runs = [];
    for (let run = 1; run <= options.runs; run++) {
      const simulator = createSimulator(client, devnet.chainId, { ...modes[mode], p256Precompile: false });
      const { reputation, validation } = defaultBundlerSettings;
      const rules = { ...reputation, p256Precompile: false, maxPaymasterContextBytes: validation.maxPaymasterContextBytes };
      const validate = (op: UserOperation) =>
        validateUserOperation({ simulator, rules, nowSeconds: BigInt(Math.floor(Date.now() / 1000)) }, entryPoint, op);
      for (const op of ops.slice(0, Math.min(20, ops.length))) await validate(op); // warm-up: workers loaded, JIT warm
      const latencies: number[] = [];
      const cpuFrom = process.cpuUsage();
      const anvilFrom = anvilPid ? processCpuSeconds(anvilPid) : undefined;
      const start = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (next < ops.length) {
            const op = ops[next++]!;
            const t0 = performance.now();
            await validate(op);
            latencies.push(performance.now() - t0);
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      const cpu = process.cpuUsage(cpuFrom);
      const anvilTo = anvilPid ? processCpuSeconds(anvilPid) : undefined;
      await simulator.close();
      const figures = {
        validationsPerSecond: round(ops.length / seconds),
        bundlerCpuMsPerValidation: round((cpu.user + cpu.system) / 1000 / ops.length),
        nodeCpuMsPerValidation: anvilFrom !== undefined && anvilTo !== undefined ? round(((anvilTo - anvilFrom) * 1000) / ops.length) : undefined,
        latencyMs: distribution(latencies),
      };
      log(`${mode} run ${run}: ${figures.validationsPerSecond} validations/s, bundler CPU ${figures.bundlerCpuMsPerValidation} ms, node CPU ${figures.nodeCpuMsPerValidation} ms per validation`);
      runs.push(figures);
    }
    results[mode] = { median: medianOf(runs), runs };
  }
  const report = {
    date: new Date().toISOString(),
    command: commandLine("bench:validation"),
    commit: gitCommit(),
    machine,
    parameters: {
      ...options,
      operation: `EntryPoint v${options.version} simulateValidation of a new SimpleAccount (initCode through the canonical factory), signed; checks as at admission (validateUserOperation)`,
    },
    results,
  };
  mkdirSync(options.out, { recursive: true });
  const base = join(options.out, `validation-v${options.version}-${options.ops}ops-c${options.concurrency}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, summary(report));
  process.stdout.write(`${summary(report)}\nresults: ${relative(process.cwd(), `${base}.json`)}, ${relative(process.cwd(), `${base}.md`)}\n`);
}

/** Signed operations of `ops` new SimpleAccounts (funded, not deployed): the heaviest common validation. */
async function prepareOperations(devnet: Awaited<ReturnType<typeof startDevnet>>, client: ChainClient, options: { ops: number; version: EntryPointVersion }) {
  const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys[0]!) });
  const ops: UserOperation[] = [];
  let nonce = await client.getTransactionCount({ address: funder.account.address, blockTag: "pending" });
  const hashes: `0x${string}`[] = [];
  for (let i = 0; i < options.ops; i++) {
    const owner = privateKeyToAccount(keccak256(stringToHex(`bundlekit validation bench owner ${i}`)));
    const account = await toSimpleAccount({ client, owner, version: options.version });
    hashes.push(await funder.sendTransaction({ to: account.address, value: parseEther("1"), nonce: nonce++, gas: 21_000n }));
    const { factory, factoryData } = (await account.getFactoryArgs()) as { factory: `0x${string}`; factoryData: `0x${string}` };
    const fields = {
      sender: account.address,
      nonce: 0n,
      callData: await account.encodeCalls([{ to: account.address, value: 0n }]),
      callGasLimit: 100_000n,
      verificationGasLimit: 1_000_000n,
      preVerificationGas: 150_000n,
      maxFeePerGas: parseGwei("10"),
      maxPriorityFeePerGas: parseGwei("1"),
    };
    const draft = (options.version === "0.6" ? { ...fields, initCode: `${factory}${factoryData!.slice(2)}`, paymasterAndData: "0x" } : { ...fields, factory, factoryData }) as UserOperation;
    ops.push({ ...draft, signature: await account.signUserOperation({ ...(draft as object), chainId: devnet.chainId } as never) } as UserOperation);
  }
  for (const hash of hashes) await client.waitForTransactionReceipt({ hash });
  return ops;
}

function summary(report: { command: string; commit: string | undefined; date: string; results: Record<string, unknown> }): string {
  const rows = Object.entries(report.results).map(([mode, value]) => {
    const m = (value as { median: { validationsPerSecond: number; bundlerCpuMsPerValidation: number; nodeCpuMsPerValidation?: number; latencyMs: { p50?: number; p95?: number } } }).median;
    return `| ${mode} | ${m.validationsPerSecond} | ${m.bundlerCpuMsPerValidation} | ${m.nodeCpuMsPerValidation ?? "?"} | ${m.latencyMs.p50} / ${m.latencyMs.p95} |`;
  });
  return [
    `# Validation benchmark (${report.date})`,
    "",
    `\`${report.command}\` at ${report.commit ?? "unknown commit"}; medians over the runs.`,
    "",
    "| mode | validations/s | bundler CPU ms / validation | node CPU ms / validation | latency p50 / p95 ms |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

runScript("bench:validation", usage, main);
