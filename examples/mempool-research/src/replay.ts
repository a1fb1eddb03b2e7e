import {
  createBundler,
  createMemoryMempoolStore,
  defineEntryPoint,
  type EntryPointVersion,
  type MempoolPolicy,
  rpcErrorOf,
  type StatusChange,
  type UserOperationV07,
} from "@bundlekit/core";
import { createSimulatedChain, createSimulatedClock } from "@bundlekit/core/simulation";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { type Address, type Hash, keccak256, toHex } from "viem";
import { senderAddress, type Workload, type WorkloadOperation } from "./workload.ts";

/** Percentiles of a sample. */
export interface Spread {
  p50: number;
  p95: number;
  p99: number;
}

/** What one policy did with one workload. */
export interface PolicyReport {
  policy: string;
  offered: number;
  admitted: number;
  /** Refused at admission, by reason. */
  refused: Record<string, number>;
  included: number;
  /** Included, but their execution reverted. */
  reverted: number;
  /** Left the pool without inclusion, by reason. */
  dropped: Record<string, number>;
  /** Admission to inclusion. */
  latencyBlocks: Spread;
  latencySeconds: Spread;
  /** In wei: what the included operations paid the beneficiary, the relayers' gas, and the difference. */
  revenue: { earned: string; gasPaid: string; net: string };
  /** Jain's index of the senders' mean latencies: 1 when every sender waits alike. */
  fairness: number;
  /** Real seconds the replay took. */
  wallSeconds: number;
}

export interface ReplayOptions {
  /** Milliseconds between simulated blocks. Default 1000. */
  blockTimeMs?: number;
  /** The canonical EntryPoint the simulated chain runs: "0.7", "0.8" or "0.9". Default "0.7". */
  entryPointVersion?: SimulatedEntryPointVersion;
  /** Called with the share of the workload replayed, now and then. */
  onProgress?: (share: number) => void;
}

const relayerKeys = [1, 2].map((i) => keccak256(toHex(`bundlekit research relayer ${i}`)));

/** The EntryPoint versions the simulated chain runs: those whose `EntryPointSimulations` it answers for (v0.7+). */
export type SimulatedEntryPointVersion = Exclude<EntryPointVersion, "0.6">;

/** Operation `op` of the workload, as its sender would sign it (the simulated chain checks no signature). */
function toUserOperation(op: WorkloadOperation, sender: Address): UserOperationV07 {
  return {
    sender,
    nonce: BigInt(op.nonce),
    callData: "0x",
    callGasLimit: BigInt(op.callGasLimit),
    verificationGasLimit: 80_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: BigInt(op.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas),
    signature: `0x${"11".repeat(65)}`,
  };
}

/**
 * Replay `workload` through the real engine with `policy`, on a simulated chain and clock: each
 * operation is sent at its arrival time, blocks come every `blockTimeMs`, and the run ends when
 * every admitted operation is included or dropped (or a simulated minute after the last arrival).
 */
export async function replay(workload: Workload, policy: MempoolPolicy, options: ReplayOptions = {}): Promise<PolicyReport> {
  const started = performance.now();
  const blockTimeMs = options.blockTimeMs ?? 1_000;
  const clock = createSimulatedClock(1_750_000_000_000);
  const t0 = clock.now();
  // Compact bookkeeping, for workloads of millions: per sender, the workload index of each nonce.
  const addresses: Address[] = [];
  const senderOf = new Map<string, number>();
  const planOf: number[][] = [];
  workload.operations.forEach((op, index) => {
    if (!addresses[op.sender]) {
      addresses[op.sender] = senderAddress(op.sender);
      senderOf.set(addresses[op.sender]!.toLowerCase(), op.sender);
      planOf[op.sender] = [];
    }
    planOf[op.sender]![op.nonce] = index;
  });
  const indexOf = (op: { sender: string; nonce: bigint }) => planOf[senderOf.get(op.sender.toLowerCase()) ?? -1]?.[Number(op.nonce)];
  const wasAdmitted = new Uint8Array(workload.operations.length);
  const chain = createSimulatedChain({
    clock,
    blockTimeMs,
    entryPoint: defineEntryPoint(options.entryPointVersion ?? "0.7"),
    // Receipts are read within a few blocks of inclusion; older ones need not stay in memory.
    retainBlocks: 256,
    behaviour: (op) => {
      const index = indexOf(op);
      const planned = index === undefined ? undefined : workload.operations[index];
      return {
        // Valid when admitted; invalid by the time it is bundled, when the workload says so.
        validationFailure: planned?.failsAtBundling && wasAdmitted[index!] ? planned.failsAtBundling : undefined,
        executes: !planned?.reverts,
      };
    },
  });
  const bundler = await createBundler({
    client: chain.client,
    store: createMemoryMempoolStore({ keepFinal: 10_000 }),
    policy,
    signer: createLocalKeySigner(relayerKeys),
    submitter: chain.submitter,
    simulator: chain.simulator,
    blocks: chain.blocks,
    clock,
    entryPoints: [chain.entryPoint],
    // The simulated chain runs no EVM to trace: validation is simulation only, by explicit choice.
    settings: { mempool: { maxSize: 100_000 }, validation: { mode: "unsafe" }, bundling: { intervalMs: blockTimeMs }, relaying: { minSignerBalance: 0n }, tracking: { blockPollingIntervalMs: blockTimeMs } },
  });

  /** Admitted operations not yet included or dropped. */
  const admittedAt = new Map<Hash, { time: number; block: bigint; sender: number }>();
  let admitted = 0;
  let gasPaid = 0n;
  chain.blocks.subscribe((head) => {
    for (const hash of chain.transactionsOf(head.number)) {
      const receipt = chain.receipt(hash)!;
      gasPaid += receipt.gasUsed * receipt.effectiveGasPrice;
    }
  });
  const refused: Record<string, number> = {};
  const dropped: Record<string, number> = {};
  const latencies: { sender: number; blocks: number; seconds: number }[] = [];
  let reverted = 0;
  let earned = 0n;
  bundler.onStatusChange((change: StatusChange) => {
    const admitted = admittedAt.get(change.userOpHash);
    if (!admitted) return;
    if (change.status === "included" || change.status === "dropped" || change.status === "failed") admittedAt.delete(change.userOpHash);
    if (change.status === "included") {
      const receipt = chain.receipt(change.transactionHash!)!;
      const log = receipt.logs.find((l) => l.userOpHash === change.userOpHash)!;
      earned += log.actualGasCost;
      if (!change.success) reverted++;
      latencies.push({ sender: admitted.sender, blocks: Number(receipt.blockNumber - admitted.block), seconds: (clock.now() - admitted.time) / 1000 });
    }
    if (change.status === "dropped" || change.status === "failed") {
      const reason = (change.reason ?? change.status).replace(/0x[0-9a-f]{64}/gi, "<hash>");
      dropped[reason] = (dropped[reason] ?? 0) + 1;
    }
  });

  // Each arrival schedules the next, so the clock holds one pending arrival, not the whole workload.
  let sent = 0;
  const arrive = () => {
    const index = sent++;
    const op = workload.operations[index]!;
    const next = workload.operations[sent];
    if (next) clock.setTimeout(arrive, next.at - op.at);
    bundler.sendUserOperation(toUserOperation(op, addresses[op.sender]!), chain.entryPoint.address).then(
      (hash) => {
        wasAdmitted[index] = 1;
        admitted++;
        admittedAt.set(hash, { time: clock.now(), block: chain.head().number, sender: op.sender });
      },
      (error: unknown) => {
        const wire = rpcErrorOf(error);
        const message = wire ? `${wire.code} ${wire.message}` : String(error);
        const reason = message.replace(/0x[0-9a-f]{40}/gi, "<sender>");
        refused[reason] = (refused[reason] ?? 0) + 1;
      },
    );
  };
  if (workload.operations.length > 0) clock.setTimeout(arrive, workload.operations[0]!.at);

  bundler.start();
  const end = t0 + (workload.operations.at(-1)?.at ?? 0);
  const step = Math.max(blockTimeMs, Math.ceil((end - t0) / 100));
  while (clock.now() < end) {
    await clock.advanceBy(step);
    options.onProgress?.(sent / Math.max(1, workload.operations.length));
  }
  const settled = () => admittedAt.size === 0;
  for (let waited = 0; !settled() && waited < 60_000; waited += blockTimeMs) await clock.advanceBy(blockTimeMs);
  await bundler.stop();
  chain.stop();

  return {
    policy: policy.name,
    offered: workload.operations.length,
    admitted,
    refused,
    included: latencies.length,
    reverted,
    dropped,
    latencyBlocks: spread(latencies.map((l) => l.blocks)),
    latencySeconds: spread(latencies.map((l) => l.seconds)),
    revenue: { earned: earned.toString(), gasPaid: gasPaid.toString(), net: (earned - gasPaid).toString() },
    fairness: jain(latencies),
    wallSeconds: Math.round(performance.now() - started) / 1000,
  };
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

/** Jain's fairness index of the senders' mean latencies (seconds): (Σx)² / (n·Σx²). */
function jain(latencies: { sender: number; seconds: number }[]): number {
  const bySender = new Map<number, { sum: number; count: number }>();
  for (const { sender, seconds } of latencies) {
    const total = bySender.get(sender) ?? { sum: 0, count: 0 };
    bySender.set(sender, { sum: total.sum + seconds, count: total.count + 1 });
  }
  const means = [...bySender.values()].map(({ sum, count }) => sum / count);
  const sum = means.reduce((a, b) => a + b, 0);
  const squares = means.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : Math.round(((sum * sum) / (means.length * squares)) * 1000) / 1000;
}
