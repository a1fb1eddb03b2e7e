import { BundlerError, createBundler, type MempoolPolicy, type StatusChange, type UserOperationV07 } from "@bundlekit/core";
import { createSimulatedChain, createSimulatedClock } from "@bundlekit/core/simulation";
import { createMemoryMempoolStore } from "@bundlekit/core/testing";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { type Hash, keccak256, toHex } from "viem";
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
  /** Called with the share of the workload replayed, now and then. */
  onProgress?: (share: number) => void;
}

const relayerKeys = [1, 2].map((i) => keccak256(toHex(`bundlekit research relayer ${i}`)));

/** Operation `op` of the workload, as its sender would sign it (the simulated chain checks no signature). */
function toUserOperation(op: WorkloadOperation): UserOperationV07 {
  return {
    sender: senderAddress(op.sender),
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
  const byKey = new Map(workload.operations.map((op) => [`${senderAddress(op.sender).toLowerCase()}/${op.nonce}`, op]));
  const admittedKeys = new Set<string>();
  const keyOf = (op: { sender: string; nonce: bigint }) => `${op.sender.toLowerCase()}/${op.nonce}`;
  const chain = createSimulatedChain({
    clock,
    blockTimeMs,
    behaviour: (op) => {
      const planned = byKey.get(keyOf(op));
      return {
        // Valid when admitted; invalid by the time it is bundled, when the workload says so.
        validationFailure: planned?.failsAtBundling && admittedKeys.has(keyOf(op)) ? planned.failsAtBundling : undefined,
        executes: !planned?.reverts,
      };
    },
  });
  const bundler = await createBundler({
    client: chain.client,
    store: createMemoryMempoolStore(),
    policy,
    signer: createLocalKeySigner(relayerKeys),
    submitter: chain.submitter,
    simulator: chain.simulator,
    blocks: chain.blocks,
    clock,
    entryPoints: [chain.entryPoint],
    // The simulated chain runs no EVM to trace: validation is simulation only, by explicit choice.
    config: { validationMode: "unsafe", minSignerBalance: 0n, bundleInterval: blockTimeMs, blockPollingInterval: blockTimeMs, maxMempoolSize: 100_000 },
  });

  const admittedAt = new Map<Hash, { time: number; block: bigint; sender: number }>();
  const refused: Record<string, number> = {};
  const dropped: Record<string, number> = {};
  const latencies: { sender: number; blocks: number; seconds: number }[] = [];
  let reverted = 0;
  let earned = 0n;
  bundler.onStatusChange((change: StatusChange) => {
    const admitted = admittedAt.get(change.userOpHash);
    if (!admitted) return;
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

  let sent = 0;
  for (const op of workload.operations) {
    clock.setTimeout(() => {
      const userOperation = toUserOperation(op);
      bundler.sendUserOperation(userOperation, chain.entryPoint.address).then(
        (hash) => {
          admittedKeys.add(keyOf(userOperation));
          admittedAt.set(hash, { time: clock.now(), block: chain.head().number, sender: op.sender });
        },
        (error: unknown) => {
          const message = error instanceof BundlerError ? `${error.code} ${error.message}` : String(error);
          const reason = message.replace(/0x[0-9a-f]{40}/gi, "<sender>");
          refused[reason] = (refused[reason] ?? 0) + 1;
        },
      );
      sent++;
    }, op.at);
  }

  bundler.start();
  const end = t0 + (workload.operations.at(-1)?.at ?? 0);
  const step = Math.max(blockTimeMs, Math.ceil((end - t0) / 100));
  while (clock.now() < end) {
    await clock.advanceBy(step);
    options.onProgress?.(sent / Math.max(1, workload.operations.length));
  }
  const settled = () => latencies.length + Object.values(dropped).reduce((a, b) => a + b, 0) >= admittedAt.size;
  for (let waited = 0; !settled() && waited < 60_000; waited += blockTimeMs) await clock.advanceBy(blockTimeMs);
  await bundler.stop();
  chain.stop();

  let gasPaid = 0n;
  for (const block of chain.history()) for (const hash of block.transactions) {
    const receipt = chain.receipt(hash)!;
    gasPaid += receipt.gasUsed * receipt.effectiveGasPrice;
  }
  return {
    policy: policy.name,
    offered: workload.operations.length,
    admitted: admittedAt.size,
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
  const bySender = new Map<number, number[]>();
  for (const { sender, seconds } of latencies) bySender.set(sender, [...(bySender.get(sender) ?? []), seconds]);
  const means = [...bySender.values()].map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length);
  const sum = means.reduce((a, b) => a + b, 0);
  const squares = means.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : Math.round(((sum * sum) / (means.length * squares)) * 1000) / 1000;
}
