import {
  BundlerConfigError,
  type BundlerSettings,
  type BundlerSettingsInput,
  createBundler,
  createMemoryMempoolStore,
  defineEntryPoint,
  type EntryPointVersion,
  type MempoolPolicy,
  mergeBundlerSettings,
  resolveBundlerSettings,
  rpcErrorOf,
  type UserOperationV07,
} from "@bundlekit/core";
import { createSimulatedChain, createSimulatedClock } from "@bundlekit/core/simulation";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { type Address, type Hash, type Hex, keccak256, toHex } from "viem";
import { isPacked, type PackedOperations, type PackedWorkload, packOperations } from "./packed-workload.ts";
import { paymasterAddress, senderAddress, type Workload } from "./workload.ts";

/** Percentiles of a sample. */
export interface Spread {
  p50: number;
  p95: number;
  p99: number;
}

/** What a policy factory is given for each replay: the simulated clock and the engine's settings. */
export interface PolicyContext {
  /** The simulated time, ms: what `MempoolEntry.receivedAt` is measured on. */
  now(): number;
  /** `mempool.sameSenderCount`, for `erc7562Admission` (the shipped policies' options take it by this name). */
  sameSenderMempoolCount: number;
  /** The engine's settings in this replay. */
  settings: BundlerSettings;
}

/** A policy, or a function making a fresh one for each replay (the shipped policies' `create…` functions are such). */
export type PolicySource =
  | MempoolPolicy
  | ((context: PolicyContext) => MempoolPolicy | Promise<MempoolPolicy>);

/** What became of each operation of a workload in one replay, by its index in the workload: the data the statistics resample. */
export interface OperationOutcomes {
  /** 0 never settled (held back, or still pooled at the end), 1 refused, 2 included, 3 dropped (or failed). */
  kind: Uint8Array;
  /** For refused and dropped operations, an index into `reasons`; -1 otherwise. */
  reason: Int32Array;
  reasons: string[];
  /** From arrival at the bundler to inclusion, seconds; NaN unless included. */
  latencySeconds: Float64Array;
  /** What an included operation paid the beneficiary, wei. */
  earnedWei: Float64Array;
  /** An included operation's share of its bundle transaction's cost, by gas used, wei. */
  costWei: Float64Array;
  /** Gas an included operation used. */
  gasUsed: Float64Array;
  /** What the relayers paid for transactions that included no operation (failed bundles, cancellations), wei. */
  unattributedCostWei: number;
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
  /** Still in the pool, or held back by their sender, when the replay ended. */
  unsettled: number;
  /** Operations their sender held back until it had fewer than `mempool.sameSenderCount` in flight (see `ReplayOptions.pacing`). */
  held: number;
  /** From arrival at the bundler to inclusion. */
  latencySeconds: Spread;
  /** In wei: what the included operations paid the beneficiary, the relayers' gas, and the difference. */
  revenue: { earned: string; gasPaid: string; net: string };
  /** Gas the included operations used. */
  gasUsed: string;
  /** Jain's index of the senders' mean latencies: 1 when every sender waits alike. */
  fairness: number;
  /** Bundle transactions included, and the mean operations in one. */
  bundles: number;
  operationsPerBundle: number;
  /** Mean share of the block gas limit used, over the blocks mined while operations arrived or waited in the pool. */
  blockFullness: number;
  /** The base fee's highest value and its value at the last arrival, gwei. */
  baseFeeGwei: { max: number; atLastArrival: number };
  /** Simulated seconds the replay ran, and real seconds it took. */
  simulatedSeconds: number;
  wallSeconds: number;
  /** Each operation's outcome, for the statistics; not written to report.json. */
  outcomes: OperationOutcomes;
}

/** The simulated chain a replay runs on. */
export interface ChainOptions {
  /** Milliseconds between blocks (and between bundling ticks). Default 1000. */
  blockTimeMs?: number;
  /** Gas a block holds. Default 30,000,000. */
  blockGasLimit?: bigint;
  /** The first block's base fee, wei; it then follows block fullness (EIP-1559). Default 1 gwei. */
  initialBaseFee?: bigint;
  /** The canonical EntryPoint the simulated chain runs: "0.7", "0.8" or "0.9". Default "0.7". */
  entryPointVersion?: SimulatedEntryPointVersion;
}

/** The EntryPoint versions the simulated chain runs: those whose `EntryPointSimulations` it answers for (v0.7+). */
export type SimulatedEntryPointVersion = Exclude<EntryPointVersion, "0.6">;

/** The versions `SimulatedEntryPointVersion` names, for the command line. */
export const simulatedEntryPointVersions: readonly SimulatedEntryPointVersion[] = [
  "0.7",
  "0.8",
  "0.9",
];

export interface ReplayOptions extends ChainOptions {
  /** Engine settings over the lab's own (`labSettings`); `validation.mode` must stay `unsafe`. */
  settings?: BundlerSettingsInput;
  /**
   * Senders keep at most `mempool.sameSenderCount` operations in flight (ERC-7562's per-sender
   * limit): a further one waits, as a wallet waits for a receipt, and is sent when one of them is
   * included, dropped or refused. Default true; false sends every operation at its arrival time,
   * and the pool refuses what exceeds the limit.
   */
  pacing?: boolean;
  /** Whether the workload's paymasters are staked (1 ETH, a day's unstake delay). Default true. */
  stakedPaymasters?: boolean;
  /** How long to wait after the last arrival for every operation to settle, simulated seconds. Default `mempool.ttlSeconds` + 60. */
  drainSeconds?: number;
  /** Called with the share of the workload replayed, now and then. */
  onProgress?: (share: number) => void;
}

const relayerKeys = [1, 2].map((i) => keccak256(toHex(`bundlekit research relayer ${i}`)));

/** The settings the lab runs the engine with, under the caller's: a large pool, simulation-only validation (the simulated chain runs no EVM to trace), bundling and polling at each block, relayers that need no balance. */
export function labSettings(blockTimeMs: number): BundlerSettingsInput {
  return {
    mempool: { maxSize: 100_000 },
    validation: { mode: "unsafe" },
    bundling: { intervalMs: blockTimeMs },
    relaying: { minSignerBalance: 0n },
    tracking: { blockPollingIntervalMs: blockTimeMs },
  };
}

/**
 * The engine settings of a replay: `settings` over `labSettings`, checked as `createBundler`
 * checks them. A `BundlerConfigError` names a bad field; `validation.mode: "safe"` is refused, for
 * there is no EVM on the simulated chain to trace.
 */
export function replaySettings(
  settings: BundlerSettingsInput | undefined,
  blockTimeMs: number,
): { input: BundlerSettingsInput; resolved: BundlerSettings } {
  const input = mergeBundlerSettings(labSettings(blockTimeMs), settings);
  const resolved = resolveBundlerSettings(input);
  if (resolved.validation.mode !== "unsafe")
    throw new BundlerConfigError(
      "validation.mode",
      `must be unsafe in the lab: the simulated chain runs no EVM to trace, got "${resolved.validation.mode}"`,
    );
  return { input, resolved };
}

/** The signature every operation carries: one string for all, so the engine reads the same flat string each time. */
const signature: Hex = `0x${"11".repeat(65)}`;

/** Operation `i` of the workload, as its sender would sign it (the simulated chain checks no signature). */
function toUserOperation(
  ops: PackedOperations,
  i: number,
  sender: Address,
  paymaster: Address | undefined,
): UserOperationV07 {
  return {
    sender,
    nonce: BigInt(ops.nonce[i]!),
    callData: "0x",
    callGasLimit: BigInt(ops.amount("callGasLimit", i)),
    verificationGasLimit: 80_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: BigInt(ops.amount("maxFeePerGas", i)),
    maxPriorityFeePerGas: BigInt(ops.amount("maxPriorityFeePerGas", i)),
    signature,
    ...(paymaster
      ? {
          paymaster,
          paymasterVerificationGasLimit: 40_000n,
          paymasterPostOpGasLimit: 20_000n,
          paymasterData: "0x",
        }
      : {}),
  };
}

/** A refusal's or drop's reason with what differs per operation (hashes, addresses, amounts) taken out, so that alike reasons count together. */
export function reasonOf(text: string): string {
  return text
    .replace(/0x[0-9a-f]{64}/gi, "<hash>")
    .replace(/0x[0-9a-f]{40}/gi, "<address>")
    .replace(/\b\d{4,}\b/g, "<n>");
}

/**
 * Replay `workload` through the real engine with `policy`, on a simulated chain and clock: each
 * operation is sent at its arrival time (or, with pacing, once its sender has room), blocks
 * come every `blockTimeMs`, and the run ends when every operation is settled (included, dropped
 * or refused), or `drainSeconds` after the last arrival. A workload of millions is best given
 * packed (`packWorkload`), its operation objects let go.
 */
export async function replay(
  workload: Workload | PackedWorkload,
  policy: PolicySource,
  options: ReplayOptions = {},
): Promise<PolicyReport> {
  const started = performance.now();
  const blockTimeMs = options.blockTimeMs ?? 1_000;
  const { input, resolved } = replaySettings(options.settings, blockTimeMs);
  const clock = createSimulatedClock(1_750_000_000_000);
  const t0 = clock.now();
  const ops = isPacked(workload.operations) ? workload.operations : packOperations(workload.operations);
  const total = ops.length;
  // Compact bookkeeping, for workloads of millions: per sender, the workload index of each nonce.
  const addresses: Address[] = [];
  const senderOf = new Map<string, number>();
  const planOf: number[][] = [];
  const paymasters = new Map<number, Address>();
  for (let index = 0; index < total; index++) {
    const sender = ops.sender[index]!;
    const paymaster = ops.paymaster[index]!;
    if (!addresses[sender]) {
      // One string for both: the address in lower case is also the key it is looked up by.
      const address = senderAddress(sender).toLowerCase() as Address;
      addresses[sender] = address;
      senderOf.set(address, sender);
      planOf[sender] = [];
    }
    planOf[sender]![ops.nonce[index]!] = index;
    if (paymaster >= 0 && !paymasters.has(paymaster))
      paymasters.set(paymaster, paymasterAddress(paymaster));
  }
  const staked = new Set(
    options.stakedPaymasters === false ? [] : [...paymasters.values()].map((a) => a.toLowerCase()),
  );
  /** The workload index of an operation the chain decoded; its sender in any letter case, each form remembered once seen. */
  const indexOf = (op: { sender: string; nonce: bigint }) => {
    let sender = senderOf.get(op.sender);
    if (sender === undefined) {
      sender = senderOf.get(op.sender.toLowerCase());
      if (sender !== undefined) senderOf.set(op.sender, sender);
    }
    return planOf[sender ?? -1]?.[Number(op.nonce)];
  };
  const wasAdmitted = new Uint8Array(total);
  const chain = createSimulatedChain({
    clock,
    blockTimeMs,
    entryPoint: defineEntryPoint(options.entryPointVersion ?? "0.7"),
    ...(options.blockGasLimit !== undefined ? { blockGasLimit: options.blockGasLimit } : {}),
    ...(options.initialBaseFee !== undefined ? { initialBaseFee: options.initialBaseFee } : {}),
    // Receipts are read within a few blocks of inclusion; older ones need not stay in memory.
    retainBlocks: 256,
    stakeOf: (entity) =>
      staked.has(entity.toLowerCase())
        ? { stake: 10n ** 18n, unstakeDelaySec: 86_400n }
        : undefined,
    behaviour: (op) => {
      const index = indexOf(op);
      if (index === undefined) return { validationFailure: undefined, executes: true };
      const failure = ops.failsAtBundling[index]!;
      return {
        // Valid when admitted; invalid by the time it is bundled, when the workload says so.
        validationFailure: failure >= 0 && wasAdmitted[index] ? ops.failures[failure] : undefined,
        executes: !ops.reverts[index],
      };
    },
  });
  const context: PolicyContext = {
    now: () => clock.now(),
    sameSenderMempoolCount: resolved.mempool.sameSenderCount,
    settings: resolved,
  };
  const chosen = typeof policy === "function" ? await policy(context) : policy;
  const bundler = await createBundler({
    client: chain.client,
    // The engine reads a final operation around when it settles (its receipt comes within a few
    // blocks): a few thousand of them, tens of seconds at the default rate, are plenty to keep.
    store: createMemoryMempoolStore({ keepFinal: 2_000 }),
    policy: chosen,
    signer: createLocalKeySigner(relayerKeys),
    submitter: chain.submitter,
    simulator: chain.simulator,
    blocks: chain.blocks,
    clock,
    entryPoints: [chain.entryPoint],
    settings: input,
  });

  const outcomes: OperationOutcomes = {
    kind: new Uint8Array(total),
    reason: new Int32Array(total).fill(-1),
    reasons: [],
    latencySeconds: new Float64Array(total).fill(Number.NaN),
    earnedWei: new Float64Array(total),
    costWei: new Float64Array(total),
    gasUsed: new Float64Array(total),
    unattributedCostWei: 0,
  };
  const reasonIds = new Map<string, number>();
  const reasonId = (text: string, prefix = "") => {
    const reason = prefix + reasonOf(text);
    let id = reasonIds.get(reason);
    if (id === undefined) {
      id = outcomes.reasons.push(reason) - 1;
      reasonIds.set(reason, id);
    }
    return id;
  };

  // Pacing: per sender, operations sent and not yet settled, and those waiting for room.
  const limit =
    options.pacing === false ? Number.POSITIVE_INFINITY : resolved.mempool.sameSenderCount;
  const inFlight = new Int32Array(addresses.length);
  /** Senders with operations waiting; a sender's entry goes once its queue is empty. */
  const waiting = new Map<number, number[]>();
  let held = 0;

  /** Admitted operations not yet included or dropped, by hash: their workload index and arrival time. */
  const pooled = new Map<Hash, { index: number; time: number }>();
  let admitted = 0;
  let sent = 0;
  let arrived = 0;
  let reverted = 0;
  let earned = 0n;
  let gasPaid = 0n;
  let gasUsed = 0n;
  let bundles = 0;
  let bundled = 0;
  let fullness = 0;
  let busyBlocks = 0;
  let maxBaseFee = 0n;
  let baseFeeAtLastArrival = 0n;
  const lastArrival = t0 + (total > 0 ? ops.at[total - 1]! : 0);

  const settle = (index: number) => {
    const sender = ops.sender[index]!;
    inFlight[sender]!--;
    const queue = waiting.get(sender);
    while (queue?.length && inFlight[sender]! < limit) send(queue.shift()!);
    if (queue?.length === 0) waiting.delete(sender);
  };

  chain.blocks.subscribe((head) => {
    if (head.baseFeePerGas > maxBaseFee) maxBaseFee = head.baseFeePerGas;
    let blockGas = 0n;
    for (const hash of chain.transactionsOf(head.number)) {
      const receipt = chain.receipt(hash)!;
      const cost = receipt.gasUsed * receipt.effectiveGasPrice;
      gasPaid += cost;
      blockGas += receipt.gasUsed;
      if (receipt.logs.length === 0) {
        outcomes.unattributedCostWei += Number(cost);
        continue;
      }
      bundles++;
      bundled += receipt.logs.length;
      const used = receipt.logs.reduce((sum, log) => sum + log.actualGasUsed, 0n);
      for (const log of receipt.logs) {
        const index = pooled.get(log.userOpHash)?.index;
        if (index === undefined) continue;
        outcomes.earnedWei[index] = Number(log.actualGasCost);
        outcomes.gasUsed[index] = Number(log.actualGasUsed);
        outcomes.costWei[index] = (Number(cost) * Number(log.actualGasUsed)) / Number(used);
        earned += log.actualGasCost;
        gasUsed += log.actualGasUsed;
      }
    }
    if (arrived < total || pooled.size > 0) {
      busyBlocks++;
      fullness += Number(blockGas) / Number(head.gasLimit);
    }
    if (clock.now() <= lastArrival) baseFeeAtLastArrival = head.baseFeePerGas;
  });

  bundler.onStatusChange((change) => {
    const admittedOp = pooled.get(change.userOpHash);
    if (!admittedOp) return;
    const { index } = admittedOp;
    if (change.status === "included") {
      pooled.delete(change.userOpHash);
      outcomes.kind[index] = 2;
      outcomes.latencySeconds[index] = (clock.now() - admittedOp.time) / 1000;
      if (!change.success) reverted++;
      settle(index);
    }
    if (change.status === "dropped" || change.status === "failed") {
      pooled.delete(change.userOpHash);
      outcomes.kind[index] = 3;
      outcomes.reason[index] = reasonId(change.reason ?? change.status);
      settle(index);
    }
  });

  function send(index: number) {
    const sender = ops.sender[index]!;
    sent++;
    inFlight[sender]!++;
    const paymaster = ops.paymaster[index]! >= 0 ? paymasters.get(ops.paymaster[index]!) : undefined;
    const time = clock.now();
    bundler
      .sendUserOperation(
        toUserOperation(ops, index, addresses[sender]!, paymaster),
        chain.entryPoint.address,
      )
      .then(
        (hash) => {
          wasAdmitted[index] = 1;
          admitted++;
          pooled.set(hash, { index, time });
        },
        (error: unknown) => {
          const wire = rpcErrorOf(error);
          outcomes.kind[index] = 1;
          outcomes.reason[index] = wire
            ? reasonId(wire.message, `${wire.code} `)
            : reasonId(String(error));
          settle(index);
        },
      );
  }

  // Each arrival schedules the next, so the clock holds one pending arrival, not the whole workload.
  const arrive = () => {
    const index = arrived++;
    const sender = ops.sender[index]!;
    if (arrived < total) clock.setTimeout(arrive, ops.at[arrived]! - ops.at[index]!);
    if (inFlight[sender]! < limit) return send(index);
    held++;
    const queue = waiting.get(sender) ?? [];
    queue.push(index);
    waiting.set(sender, queue);
  };
  if (total > 0) clock.setTimeout(arrive, ops.at[0]!);

  bundler.start();
  const step = Math.max(blockTimeMs, Math.ceil((lastArrival - t0) / 100));
  while (clock.now() < lastArrival) {
    await clock.advanceBy(step);
    options.onProgress?.(arrived / Math.max(1, total));
  }
  const drainMs = (options.drainSeconds ?? resolved.mempool.ttlSeconds + 60) * 1000;
  const settled = () => sent === total && pooled.size === 0;
  for (let waited = 0; !settled() && waited < drainMs; waited += blockTimeMs)
    await clock.advanceBy(blockTimeMs);
  await bundler.stop();
  chain.stop();

  const count = (kind: number) => {
    const byReason: Record<string, number> = {};
    outcomes.kind.forEach((k, i) => {
      if (k !== kind) return;
      const reason = outcomes.reasons[outcomes.reason[i]!]!;
      byReason[reason] = (byReason[reason] ?? 0) + 1;
    });
    return byReason;
  };
  const included: { sender: number; seconds: number }[] = [];
  outcomes.kind.forEach((k, i) => {
    if (k === 2)
      included.push({
        sender: ops.sender[i]!,
        seconds: outcomes.latencySeconds[i]!,
      });
  });
  const gwei = (wei: bigint) => Number(wei) / 1e9;
  return {
    policy: chosen.name,
    offered: total,
    admitted,
    refused: count(1),
    included: included.length,
    reverted,
    dropped: count(3),
    unsettled: outcomes.kind.filter((k) => k === 0).length,
    held,
    latencySeconds: spread(included.map((l) => l.seconds)),
    revenue: {
      earned: earned.toString(),
      gasPaid: gasPaid.toString(),
      net: (earned - gasPaid).toString(),
    },
    gasUsed: gasUsed.toString(),
    fairness: Math.round(jain(included) * 1000) / 1000,
    bundles,
    operationsPerBundle: bundles === 0 ? 0 : Math.round((bundled / bundles) * 10) / 10,
    blockFullness: busyBlocks === 0 ? 0 : Math.round((fullness / busyBlocks) * 1000) / 1000,
    baseFeeGwei: {
      max: Math.round(gwei(maxBaseFee) * 1000) / 1000,
      atLastArrival: Math.round(gwei(baseFeeAtLastArrival) * 1000) / 1000,
    },
    simulatedSeconds: (clock.now() - t0) / 1000,
    wallSeconds: Math.round(performance.now() - started) / 1000,
    outcomes,
  };
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ??
    Number.NaN;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

/** Jain's fairness index of the senders' mean latencies (seconds): (Σx)² / (n·Σx²); 1 when none waited. */
export function jain(latencies: readonly { sender: number; seconds: number }[]): number {
  const bySender = new Map<number, { sum: number; count: number }>();
  for (const { sender, seconds } of latencies) {
    const total = bySender.get(sender) ?? { sum: 0, count: 0 };
    bySender.set(sender, { sum: total.sum + seconds, count: total.count + 1 });
  }
  const means = [...bySender.values()].map(({ sum, count }) => sum / count);
  const sum = means.reduce((a, b) => a + b, 0);
  const squares = means.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (means.length * squares);
}
