/**
 * Latency of the pull path (examples/sequencer-path): operations sent to the stand-alone endpoint
 * at a fixed rate, each from its own account, while the sequencer builds a block every block time,
 * calling the engine in process or (`--builder-api`) over the service's builder API. For each
 * operation: send → preconfirmed (its `userOperationStatus` notification on the public WebSocket)
 * and send → included, in milliseconds and in blocks. Writes
 * bench/results/preconfirmation-<ops>ops-<rate>per-s[-builder-api].json and .md. See bench/README.md.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { preconfirmationTypedData } from "@bundlekit/core";
import { type Address, type Hash, type Hex, http, verifyTypedData } from "viem";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { startSequencerPath } from "../examples/sequencer-path/src/sequencer-path.ts";
import { prepareOperations, type SignedOperation, setUpAccounts } from "./accounts.ts";
import { commandLine, gitCommit, machineFacts } from "./run-facts.ts";
import {
  cleanUp,
  exitWithUsageOnHelp,
  integerFlag,
  log,
  onCleanUp,
  runScript,
  sleep,
} from "./script.ts";
import { distribution } from "./stats.ts";

const usage = `usage: pnpm bench:preconfirmation [--ops N] [--rate R] [--block-time-ms MS] [--builder-api] [--out DIR]

  --ops N            operations, each from its own account (default 500)
  --rate R           operations offered per second, on a fixed schedule (default 50)
  --block-time-ms MS the sequencer builds a block every MS milliseconds (default 1000)
  --builder-api      the sequencer pulls over the builder API (JSON-RPC, a JWT per request), not in process
  --out DIR          where results go (default bench/results)`;

async function main() {
  const { values } = parseArgs({
    options: {
      ops: { type: "string", default: "500" },
      rate: { type: "string", default: "50" },
      "block-time-ms": { type: "string", default: "1000" },
      "builder-api": { type: "boolean", default: false },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean", default: false },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  const ops = integerFlag("ops", values.ops, 1);
  const rate = integerFlag("rate", values.rate, 1);
  const blockTimeMs = integerFlag("block-time-ms", values["block-time-ms"], 1);
  const builderApi = values["builder-api"];
  const machine = machineFacts();

  log(`devnet, service and sequencer${builderApi ? " (over the builder API)" : ""}: a block every ${blockTimeMs} ms`);
  const preconfirmationKey = generatePrivateKey();
  const path = await startSequencerPath({ blockTimeMs, builderApi, preconfirmationKey });
  onCleanUp(() => path.close());
  const { client, devnet, service } = path;

  const bundler = createBundlerClient({ client, transport: http(service.url, { retryCount: 0 }) });
  const shape = { ops, accounts: ops, version: "0.7" } as const;
  log(`setup: funding and deploying ${ops} SimpleAccounts (not timed)`);
  const accounts = await setUpAccounts(devnet, client, bundler, devnet.chain, shape);
  log(`setup: signing ${ops} operations`);
  const signed = await prepareOperations(accounts, bundler, devnet.chainId, shape);
  const entryPoint = accounts[0]!.entryPoint.address;
  const send = ({ op }: SignedOperation) =>
    bundler.request({
      method: "eth_sendUserOperation",
      params: [formatUserOperationRequest(op), entryPoint],
    });

  // The preconfirmation as a user sees it: its notification on the public WebSocket.
  const now = () => performance.now();
  const sent = new Map<Hash, { at: number; head: bigint }>();
  const seen = new Map<Hash, { preconfirmedAt: number; promised: bigint; preconfirmation?: WirePreconfirmation }>();
  const socket = await subscribeToStatuses(service.url, (result) => {
    if (result.status === "preconfirmed" && !seen.has(result.userOpHash))
      seen.set(result.userOpHash, {
        preconfirmedAt: now(),
        promised: BigInt(result.blockNumber!),
        preconfirmation: result.preconfirmation,
      });
  });
  onCleanUp(async () => socket.close());
  // An operation is on chain when the sequencer mines its block, whenever the engine notices.
  const minedAt = new Map<bigint, number>();
  path.sequencer.onBlock((block) => minedAt.set(block.blockNumber, now()));

  log(`load: ${ops} operations at ${rate}/s, a block every ${blockTimeMs} ms`);
  let refused = 0;
  const t0 = now();
  const cpuAtStart = process.cpuUsage();
  await Promise.all(
    signed.map(async (op, i) => {
      await sleep(Math.max(0, t0 + (i * 1000) / rate - now()));
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const at = now();
      try {
        sent.set(await send(op), { at, head });
      } catch (error) {
        // The service sheds load it cannot simulate in time (-32005 busy): an outcome, counted.
        if ((error as { code?: number }).code !== -32005) throw error;
        refused++;
      }
    }),
  );
  const included = new Map<Hash, { at: number; block: bigint }>();
  for (const hash of sent.keys()) {
    const receipt = await bundler.waitForUserOperationReceipt({
      hash,
      pollingInterval: 100,
      timeout: 60_000,
    });
    const block = receipt.receipt.blockNumber;
    included.set(hash, { at: minedAt.get(block)!, block });
  }
  // CPU of this process (service, sequencer and the load's client; not anvil) from the first send to the last receipt.
  const cpu = process.cpuUsage(cpuAtStart);
  const cpuMsPerOperation = Math.round(((cpu.user + cpu.system) / 1000 / sent.size) * 100) / 100;

  const series = (pick: (hash: Hash, sentAt: { at: number; head: bigint }) => number | undefined) =>
    [...sent].flatMap(([hash, s]) => {
      const value = pick(hash, s);
      return value === undefined ? [] : [value];
    });
  const preconfirmedMs = series((hash, s) => {
    const at = seen.get(hash)?.preconfirmedAt;
    return at === undefined ? undefined : at - s.at;
  });
  const includedMs = series((hash, s) => included.get(hash)!.at - s.at);
  const preconfirmedBlocks = series((hash, s) => {
    const promised = seen.get(hash)?.promised;
    return promised === undefined ? undefined : Number(promised - s.head);
  });
  const includedBlocks = series((hash, s) => Number(included.get(hash)!.block - s.head));
  // Signed by the service's preconfirmation key, over what it names (checked after the run, not timed).
  const signer = privateKeyToAddress(preconfirmationKey);
  const verified = await Promise.all(
    [...seen].map(([userOpHash, { preconfirmation: p }]) =>
      p?.signature
        ? verifyTypedData({
            address: signer,
            signature: p.signature,
            ...preconfirmationTypedData({ userOpHash, entryPoint: p.entryPoint, chainId: Number(p.chainId), blockNumber: BigInt(p.blockNumber), transactionHash: p.transactionHash }),
          })
        : false,
    ),
  );
  const signedCount = verified.filter(Boolean).length;
  const inPromisedBlock = series((hash) =>
    seen.get(hash)?.promised === included.get(hash)!.block ? 1 : 0,
  ).reduce((a, b) => a + b, 0);

  const report = {
    date: new Date().toISOString(),
    command: commandLine("bench:preconfirmation"),
    commit: gitCommit(),
    machine,
    parameters: { ops, rate, blockTimeMs, builderApi },
    results: {
      sent: sent.size,
      refusedBusy: refused,
      preconfirmed: preconfirmedMs.length,
      signedPreconfirmations: signedCount,
      included: includedMs.length,
      includedInThePromisedBlock: inPromisedBlock,
      cpuMsPerOperation,
      preconfirmedMs: distribution(preconfirmedMs),
      includedMs: distribution(includedMs),
      preconfirmedBlocks: distribution(preconfirmedBlocks),
      includedBlocks: distribution(includedBlocks),
    },
    samples: { preconfirmedMs, includedMs, preconfirmedBlocks, includedBlocks },
  };
  const r = report.results;
  const row = (name: string, d: ReturnType<typeof distribution>) =>
    `| ${name} | ${d.count} | ${d.p50} | ${d.p95} | ${d.max} |`;
  const table = [
    "| send → | operations | p50 | p95 | max |",
    "| --- | --- | --- | --- | --- |",
    row("preconfirmed (ms)", r.preconfirmedMs),
    row("included (ms)", r.includedMs),
    row("preconfirmed (blocks)", r.preconfirmedBlocks),
    row("included (blocks)", r.includedBlocks),
  ].join("\n");
  const name = `preconfirmation-${ops}ops-${rate}per-s${builderApi ? "-builder-api" : ""}`;
  const dir = resolve(values.out);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    join(dir, `${name}.md`),
    [
      "# Pull path: send → preconfirmed and send → included",
      "",
      `\`${report.command}\` at ${report.commit ?? "an unknown commit"}, ${report.date}; ` +
        `${machine.cores} cores (${machine.cpuModel ?? "unknown CPU"}), Node ${machine.node}, load average at start ${machine.loadAverageAtStart.join(" ")}.`,
      "",
      `${ops} operations offered at ${rate}/s, each from its own account, a block every ${blockTimeMs} ms; ` +
        `the sequencer pulls ${builderApi ? "over the builder API (JSON-RPC, a JWT per request)" : "from the engine in process"}. ` +
        `Preconfirmed: its \`userOperationStatus\` notification on the public WebSocket (${signedCount} of ${r.preconfirmed} carried a preconfirmation signed by the service's key). ` +
        "Blocks count from the head when the operation was sent (1 = the next block). " +
        `${r.sent} accepted, ${refused} refused as busy (-32005); ` +
        `${r.includedInThePromisedBlock} of ${r.sent} were included in the block they were preconfirmed for. ` +
        `CPU of the bench process (service, sequencer, load client; not anvil) from the first send to the last receipt: ${cpuMsPerOperation} ms per operation.`,
      "",
      table,
      "",
    ].join("\n"),
  );
  process.stdout.write(
    `${table}\n\nresults: ${[`${name}.json`, `${name}.md`].map((f) => relative(process.cwd(), join(dir, f))).join(", ")}\n`,
  );
  await cleanUp();
  if (refused > 0 || r.includedInThePromisedBlock < r.sent || signedCount < r.sent) process.exitCode = 1;
}

/** A preconfirmation as notifications carry it (docs/sequencer.md). */
interface WirePreconfirmation {
  entryPoint: Address;
  chainId: Hex;
  blockNumber: Hex;
  transactionHash: Hash;
  signature: Hex | null;
}

/** A WebSocket subscribed to every operation's status on the endpoint `url` (http → ws), calling `onResult` with each notification. */
async function subscribeToStatuses(
  url: string,
  onResult: (result: { userOpHash: Hash; status: string; blockNumber?: string; preconfirmation?: WirePreconfirmation }) => void,
): Promise<WebSocket> {
  const socket = new WebSocket(url.replace(/^http/, "ws"));
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  const subscribed = new Promise<void>((resolve) => {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data));
      if (message.id === 1) resolve();
      else if (message.method === "eth_subscription") onResult(message.params.result);
    });
  });
  socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["userOperationStatus"] }));
  await subscribed;
  return socket;
}

runScript("bench:preconfirmation", usage, main);
