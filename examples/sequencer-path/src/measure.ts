/**
 * Latency of the pull path: operations sent to the stand-alone endpoint at a fixed rate, each
 * from its own new account, while the sequencer builds a block every second. For each operation:
 * send → preconfirmed and send → included, in milliseconds and in blocks. Writes
 * `results/latency.json` and `results/latency.md` (or `--out DIR`).
 *
 *   pnpm --filter @bundlekit/sequencer-path measure [--ops 500] [--rate 50] [--block-time-ms 1000] [--out DIR]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { toSimpleAccount } from "@bundlekit/devnet";
import { createWalletClient, type Hash, http, keccak256, parseEther, stringToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { startSequencerPath } from "./sequencer-path.ts";

const { values } = parseArgs({
  options: {
    ops: { type: "string", default: "500" },
    rate: { type: "string", default: "50" },
    "block-time-ms": { type: "string", default: "1000" },
    out: { type: "string", default: join(import.meta.dirname, "..", "results") },
  },
});
const ops = Number(values.ops);
const rate = Number(values.rate);
const blockTimeMs = Number(values["block-time-ms"]);
/** Accounts deployed at once in the setup, under the factory's ERC-7562 throttling. */
const wave = 50;

const path = await startSequencerPath({ blockTimeMs });
try {
  const { client, devnet, service } = path;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(`setup: funding ${ops} accounts`);
  const owners = Array.from({ length: ops }, (_, i) => privateKeyToAccount(keccak256(stringToHex(`sequencer-path measure ${i}`))));
  const accounts = await Promise.all(owners.map((owner) => toSimpleAccount({ client, owner, version: "0.7" })));
  const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys[0]!) });
  let nonce = await client.getTransactionCount({ address: funder.account.address, blockTag: "pending" });
  const funding: Hash[] = [];
  for (const account of accounts) funding.push(await funder.sendTransaction({ to: account.address, value: parseEther("0.1"), nonce: nonce++, gas: 21_000n, chain: devnet.chain }));
  await client.waitForTransactionReceipt({ hash: funding.at(-1)!, timeout: 60_000 });

  const bundler = createBundlerClient({ client, transport: http(service.url, { retryCount: 0 }) });
  const fees = await client.estimateFeesPerGas();
  /** The operation of account `i` with `nonce`, gas from one estimate per shape, signed. */
  const signer = async (nonce: bigint) => {
    const gas = await bundler.estimateUserOperationGas({ account: accounts[0]!, calls: [{ to: owners[0]!.address, value: 1n }], nonce } as never);
    return (i: number) => {
      const account = accounts[i]!;
      return (async () => {
        const op = {
          sender: account.address,
          nonce,
          ...(nonce === 0n ? await account.getFactoryArgs() : {}),
          callData: await account.encodeCalls([{ to: owners[i]!.address, value: 1n }]),
          ...gas,
          maxFeePerGas: fees.maxFeePerGas * 2n,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        };
        return { ...op, signature: await account.signUserOperation(op as never) };
      })();
    };
  };
  const send = (op: object) =>
    bundler.request({ method: "eth_sendUserOperation", params: [formatUserOperationRequest(op as never), accounts[0]!.entryPoint.address] }) as Promise<Hash>;

  log(`setup: deploying the accounts, ${wave} at a time (not timed)`);
  const deployment = await signer(0n);
  for (let start = 0; start < ops; start += wave) {
    const hashes = await Promise.all(accounts.slice(start, start + wave).map(async (_, j) => send(await deployment(start + j))));
    for (const hash of hashes) await bundler.waitForUserOperationReceipt({ hash, pollingInterval: 50, timeout: 60_000 });
  }
  log(`setup: signing ${ops} operations`);
  const transfer = await signer(1n);
  const signed = await Promise.all(accounts.map((_, i) => transfer(i)));

  // Times from the engine's own status events, in process: what a subscriber would see.
  const sent = new Map<Hash, { at: number; head: bigint }>();
  const seen = new Map<Hash, { preconfirmedAt?: number; promised?: bigint; includedAt?: number; block?: bigint }>();
  service.bundler.onStatusChange(({ userOpHash, status, blockNumber }) => {
    const record = seen.get(userOpHash) ?? {};
    if (status === "preconfirmed") Object.assign(record, { preconfirmedAt: Date.now(), promised: blockNumber });
    if (status === "included") record.includedAt = Date.now();
    seen.set(userOpHash, record);
  });
  // An operation is on chain when the sequencer mines its block, whenever the engine notices.
  const minedAt = new Map<bigint, number>();
  path.sequencer.onBlock((block) => minedAt.set(block.blockNumber, block.minedAt));

  log(`load: ${ops} operations at ${rate}/s, a block every ${blockTimeMs} ms`);
  await Promise.all(
    signed.map(async (op, i) => {
      await new Promise((resolve) => setTimeout(resolve, (i * 1000) / rate));
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const at = Date.now();
      const hash = await send(op);
      sent.set(hash, { at, head });
    }),
  );
  const deadline = Date.now() + 60_000;
  while ([...sent.keys()].some((h) => seen.get(h)?.includedAt === undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const hash of sent.keys()) {
    const receipt = await bundler.getUserOperationReceipt({ hash }).catch(() => undefined);
    if (receipt) Object.assign(seen.get(hash)!, { block: receipt.receipt.blockNumber, includedAt: minedAt.get(receipt.receipt.blockNumber) });
  }

  const quantile = (values: number[], q: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  };
  const series = (pick: (s: { at: number; head: bigint }, r: NonNullable<ReturnType<typeof seen.get>>) => number | undefined) =>
    [...sent].flatMap(([hash, s]) => {
      const value = pick(s, seen.get(hash) ?? {});
      return value === undefined ? [] : [value];
    });
  const preconfirmMs = series((s, r) => (r.preconfirmedAt === undefined ? undefined : r.preconfirmedAt - s.at));
  const includeMs = series((s, r) => (r.includedAt === undefined ? undefined : r.includedAt - s.at));
  const preconfirmBlocks = series((s, r) => (r.promised === undefined ? undefined : Number(r.promised - s.head)));
  const includeBlocks = series((s, r) => (r.block === undefined ? undefined : Number(r.block - s.head)));
  const summary = (name: string, xs: number[], digits = 0) =>
    `| ${name} | ${xs.length} | ${quantile(xs, 0.5).toFixed(digits)} | ${quantile(xs, 0.95).toFixed(digits)} | ${Math.max(...xs).toFixed(digits)} |`;
  const command = `pnpm --filter @bundlekit/sequencer-path measure --ops ${ops} --rate ${rate} --block-time-ms ${blockTimeMs}`;
  const table = [
    `# Pull path latency`,
    "",
    `${ops} operations offered at ${rate}/s, a block every ${blockTimeMs} ms; ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
    "Blocks count from the head when the operation was sent (1 = the next block).",
    "",
    "| send → | operations | p50 | p95 | max |",
    "| --- | --- | --- | --- | --- |",
    summary("preconfirmed (ms)", preconfirmMs),
    summary("included (ms)", includeMs),
    summary("preconfirmed (blocks)", preconfirmBlocks),
    summary("included (blocks)", includeBlocks),
    "",
    `\`${command}\``,
    "",
  ].join("\n");
  process.stdout.write(table);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, "latency.md"), table);
  writeFileSync(
    join(values.out, "latency.json"),
    JSON.stringify({ command, ops, rate, blockTimeMs, date: new Date().toISOString(), sent: sent.size, preconfirmed: preconfirmMs.length, included: includeMs.length, preconfirmMs, includeMs, preconfirmBlocks, includeBlocks }, null, 2),
  );
  if (includeMs.length < ops) process.exitCode = 1;
} finally {
  await path.close();
}
