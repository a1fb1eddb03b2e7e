import { seededRandom } from "@bundlekit/core/simulation";
import { type Address, keccak256, toHex } from "viem";

/** One operation of a workload: who sends it, when, what it offers, and how it behaves. */
export interface WorkloadOperation {
  /** Milliseconds after the start. */
  at: number;
  sender: number;
  nonce: number;
  maxPriorityFeePerGas: string;
  maxFeePerGas: string;
  callGasLimit: string;
  /** An `AAxx` reason when it fails validation by the time it is bundled; absent passes. */
  failsAtBundling?: string;
  /** True when its execution reverts. */
  reverts?: boolean;
}

/** A workload file: operations in arrival order, and how it was made. */
export interface Workload {
  description: string;
  senders: number;
  operations: WorkloadOperation[];
}

export interface GenerateWorkloadParameters {
  ops: number;
  seed: number;
  /** Distinct senders; their shares follow Zipf's law (exponent 1.1): a few send most. Default ops / 5. */
  senders?: number;
  /** Mean arrivals per second (Poisson). Default 50. */
  rate?: number;
  /** Share of time in bursts of 5x the rate. Default 0.1. */
  burstShare?: number;
  /** Share of operations that fail validation by the time they are bundled. Default 0.02. */
  failureRate?: number;
  /** Share of operations whose execution reverts. Default 0.05. */
  revertRate?: number;
}

/** Seeded draws (`seededRandom`, mulberry32) with the distributions workloads use: the same seed gives the same workload everywhere. */
export function createRandom(seed: number) {
  const { next } = seededRandom(seed);
  return {
    next,
    /** Exponentially distributed with the given mean. */
    exponential: (mean: number) => -Math.log(1 - next()) * mean,
    /** Log-normally distributed around `median`, spread `sigma`. */
    logNormal: (median: number, sigma: number) => median * Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())),
  };
}

/**
 * A synthetic workload: Poisson arrivals with bursts, heavy-tailed senders (Zipf), log-normal
 * priority fees around 1 gwei, varied call gas, and the given failure and revert rates.
 */
export function generateWorkload(parameters: GenerateWorkloadParameters): Workload {
  const random = createRandom(parameters.seed);
  const senders = parameters.senders ?? Math.max(1, Math.round(parameters.ops / 5));
  const rate = parameters.rate ?? 50;
  const weights = Array.from({ length: senders }, (_, i) => 1 / (i + 1) ** 1.1);
  const cumulative: number[] = [];
  weights.reduce((sum, weight, i) => (cumulative[i] = sum + weight), 0);
  const total = cumulative.at(-1)!;
  const pickSender = () => {
    const target = random.next() * total;
    let [low, high] = [0, senders - 1];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const nonces = new Array<number>(senders).fill(0);
  const operations: WorkloadOperation[] = [];
  let at = 0;
  let burstUntil = -1;
  for (let i = 0; i < parameters.ops; i++) {
    if (at > burstUntil && random.next() < (parameters.burstShare ?? 0.1) / 10) burstUntil = at + 2_000;
    at += random.exponential(1000 / (at <= burstUntil ? rate * 5 : rate));
    const sender = pickSender();
    const priority = BigInt(Math.max(1, Math.round(random.logNormal(1e9, 0.6))));
    operations.push({
      at: Math.round(at),
      sender,
      nonce: nonces[sender]!++,
      maxPriorityFeePerGas: priority.toString(),
      maxFeePerGas: (priority + BigInt(Math.round(random.logNormal(4e9, 0.4)))).toString(),
      callGasLimit: String(20_000 + Math.round(random.exponential(60_000))),
      ...(random.next() < (parameters.failureRate ?? 0.02) ? { failsAtBundling: "AA23 reverted" } : {}),
      ...(random.next() < (parameters.revertRate ?? 0.05) ? { reverts: true } : {}),
    });
  }
  return {
    description: `generated: ${parameters.ops} ops, seed ${parameters.seed}, ${senders} senders (Zipf 1.1), ${rate}/s Poisson with bursts`,
    senders,
    operations,
  };
}

/** The address of workload sender `index`. */
export function senderAddress(index: number): Address {
  return keccak256(toHex(`bundlekit research sender ${index}`)).slice(0, 42) as Address;
}
