import { keccak256Hex } from "@bundlekit/core";
import { seededRandom } from "@bundlekit/core/simulation";
import { type Address, toHex } from "viem";

/** One operation of a workload: who sends it, when, what it offers, and how it behaves. */
export interface WorkloadOperation {
  /** Milliseconds after the start. */
  at: number;
  sender: number;
  nonce: number;
  maxPriorityFeePerGas: string;
  maxFeePerGas: string;
  callGasLimit: string;
  /** The paymaster that sponsors it (`paymasterAddress(index)`); absent when the sender pays. */
  paymaster?: number;
  /** An `AAxx` reason when it fails validation by the time it is bundled; absent passes. */
  failsAtBundling?: string;
  /** True when its execution reverts. */
  reverts?: boolean;
}

/** A workload file: operations in arrival order, and how it was made. */
export interface Workload {
  description: string;
  senders: number;
  /** Distinct paymasters its operations name. Default 0. */
  paymasters?: number;
  operations: WorkloadOperation[];
}

/** How a workload is generated; every field but `ops` and `seed` has a default. */
export interface GenerateWorkloadParameters {
  ops: number;
  seed: number;
  /** Mean arrivals per second outside bursts and spikes (Poisson). Default 50. */
  rate?: number;
  /** Arrivals in a burst come this many times faster. Default 5. */
  burstFactor?: number;
  /** Share of the time spent in bursts, in [0, 1). Default 0.1. */
  burstShare?: number;
  /** Length of one burst, ms. Default 2000. */
  burstMs?: number;
  /** Distinct senders. Default `ops / opsPerSender`. */
  senders?: number;
  /** Mean operations per sender, when `senders` is not given. Default 5. */
  opsPerSender?: number;
  /** Exponent of the senders' Zipf shares: 0 is uniform, 1 is classic Zipf, higher is more skewed. Default 1. */
  senderSkew?: number;
  /**
   * Least time between two operations of one sender, ms, as a wallet waits for its previous
   * operation: a sender drawn within it is drawn again (up to 64 times, so that with too few
   * senders for the rate some still send sooner). Default 2000; 0 lets a sender send as fast as
   * it is drawn.
   */
  senderGapMs?: number;
  /** Share of all operations sent by one spammy sender (sender 0), ignoring the gap, in [0, 1). Default 0. */
  spammerShare?: number;
  /** The spammer's fees, as a multiple of what others pay. Default 1. */
  spammerFeeFactor?: number;
  /** Median priority fee, gwei (log-normal). Default 1. */
  priorityFeeGwei?: number;
  /** Spread (sigma) of the priority fee's log-normal. Default 0.6. */
  priorityFeeSpread?: number;
  /** Median of `maxFeePerGas − maxPriorityFeePerGas`, gwei (log-normal, sigma 0.4): the base fee an operation can bear. Default 4. */
  maxFeeHeadroomGwei?: number;
  /** Least call gas. Default 20,000. */
  callGasMin?: number;
  /** Mean call gas above the least (exponential). Default 60,000. */
  callGasMean?: number;
  /** Share of operations a paymaster sponsors, in [0, 1]. Default 0. */
  paymasterShare?: number;
  /** Paymasters sharing the sponsored operations (Zipf 1). Default 3. */
  paymasters?: number;
  /** Fee spikes spread over the workload: arrivals at `feeSpikeRateFactor` times the rate, bidding `feeSpikeFactor` times the fees. Default 0. */
  feeSpikes?: number;
  /** Length of one fee spike, ms. Default 5000. */
  feeSpikeMs?: number;
  /** Fees in a spike, as a multiple of the usual. Default 10. */
  feeSpikeFactor?: number;
  /** Arrivals in a spike, as a multiple of the rate. Default 3. */
  feeSpikeRateFactor?: number;
  /** Share of operations that fail validation by the time they are bundled. Default 0.02. */
  failureRate?: number;
  /** Share of operations whose execution reverts. Default 0.05. */
  revertRate?: number;
}

/** The defaults of `generateWorkload`, beside the fields it requires. */
export const workloadDefaults = {
  rate: 50,
  burstFactor: 5,
  burstShare: 0.1,
  burstMs: 2_000,
  opsPerSender: 5,
  senderSkew: 1,
  senderGapMs: 2_000,
  spammerShare: 0,
  spammerFeeFactor: 1,
  priorityFeeGwei: 1,
  priorityFeeSpread: 0.6,
  maxFeeHeadroomGwei: 4,
  callGasMin: 20_000,
  callGasMean: 60_000,
  paymasterShare: 0,
  paymasters: 3,
  feeSpikes: 0,
  feeSpikeMs: 5_000,
  feeSpikeFactor: 10,
  feeSpikeRateFactor: 3,
  failureRate: 0.02,
  revertRate: 0.05,
} as const satisfies Omit<Required<GenerateWorkloadParameters>, "ops" | "seed" | "senders">;

/** Seeded draws (`seededRandom`, mulberry32) with the distributions workloads use: the same seed gives the same workload everywhere. */
export function createRandom(seed: number) {
  const { next } = seededRandom(seed);
  return {
    next,
    /** Exponentially distributed with the given mean. */
    exponential: (mean: number) => -Math.log(1 - next()) * mean,
    /** Log-normally distributed around `median`, spread `sigma`. */
    logNormal: (median: number, sigma: number) =>
      median *
      Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())),
  };
}

/** A draw from weights: index `i` with probability `weights[i] / Σ weights` (binary search on the running sums). */
function weightedPicker(weights: readonly number[], next: () => number): () => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (const weight of weights) {
    sum += weight;
    cumulative.push(sum);
  }
  return () => {
    const target = next() * sum;
    let [low, high] = [0, weights.length - 1];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! <= target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/** A range check on a generator parameter: a `RangeError` saying which and why. */
function check(name: string, value: number, ok: boolean, expected: string): void {
  if (!ok || !Number.isFinite(value))
    throw new RangeError(`${name} must be ${expected}, got ${value}`);
}

/**
 * A synthetic workload: Poisson arrivals with bursts and fee spikes, senders with Zipf shares
 * (and optionally one spammer), each waiting `senderGapMs` between its operations, log-normal
 * fees, exponential call gas, a share sponsored by paymasters, and the given failure and revert
 * rates. A parameter out of range is a `RangeError` naming it.
 */
export function generateWorkload(parameters: GenerateWorkloadParameters): Workload {
  const operations: WorkloadOperation[] = [];
  return { ...generateOperations(parameters, (op) => operations.push(op)), operations };
}

/**
 * `generateWorkload`, handing each operation to `add` as it is drawn instead of keeping them: what
 * a packed workload of millions is generated with (`generatePackedWorkload`). Returns the rest of
 * the workload.
 */
export function generateOperations(
  parameters: GenerateWorkloadParameters,
  add: (op: WorkloadOperation) => void,
): Omit<Workload, "operations"> {
  const p = { ...workloadDefaults, ...parameters };
  check("ops", p.ops, Number.isInteger(p.ops) && p.ops >= 1, "a positive integer");
  check("rate", p.rate, p.rate > 0, "above 0");
  check("burstShare", p.burstShare, p.burstShare >= 0 && p.burstShare < 1, "in [0, 1)");
  check("burstFactor", p.burstFactor, p.burstFactor >= 1, "at least 1");
  check("burstMs", p.burstMs, p.burstMs > 0, "above 0");
  check("opsPerSender", p.opsPerSender, p.opsPerSender >= 1, "at least 1");
  check("senderSkew", p.senderSkew, p.senderSkew >= 0, "at least 0");
  check("senderGapMs", p.senderGapMs, p.senderGapMs >= 0, "at least 0");
  check("spammerShare", p.spammerShare, p.spammerShare >= 0 && p.spammerShare < 1, "in [0, 1)");
  check(
    "paymasterShare",
    p.paymasterShare,
    p.paymasterShare >= 0 && p.paymasterShare <= 1,
    "in [0, 1]",
  );
  check(
    "paymasters",
    p.paymasters,
    Number.isInteger(p.paymasters) && p.paymasters >= 1,
    "a positive integer",
  );
  check(
    "feeSpikes",
    p.feeSpikes,
    Number.isInteger(p.feeSpikes) && p.feeSpikes >= 0,
    "a whole number",
  );
  check("priorityFeeGwei", p.priorityFeeGwei, p.priorityFeeGwei > 0, "above 0");
  check("failureRate", p.failureRate, p.failureRate >= 0 && p.failureRate <= 1, "in [0, 1]");
  check("revertRate", p.revertRate, p.revertRate >= 0 && p.revertRate <= 1, "in [0, 1]");
  const senders = p.senders ?? Math.max(1, Math.round(p.ops / p.opsPerSender));
  check("senders", senders, Number.isInteger(senders) && senders >= 1, "a positive integer");

  const random = createRandom(p.seed);
  const spammer = p.spammerShare > 0 && senders > 1;
  // Sender 0 is the spammer when there is one; the others share the rest by Zipf's law.
  const pickOther = weightedPicker(
    Array.from({ length: spammer ? senders - 1 : senders }, (_, i) => 1 / (i + 1) ** p.senderSkew),
    random.next,
  );
  const pickPaymaster = weightedPicker(
    Array.from({ length: p.paymasters }, (_, i) => 1 / (i + 1)),
    random.next,
  );
  const lastSent = new Array<number>(senders).fill(Number.NEGATIVE_INFINITY);
  const pickSender = (at: number) => {
    if (spammer && random.next() < p.spammerShare) return 0;
    let sender = 0;
    for (let attempt = 0; attempt < 64; attempt++) {
      sender = pickOther() + (spammer ? 1 : 0);
      if (at - lastSent[sender]! >= p.senderGapMs) break;
    }
    return sender;
  };

  // Bursts start at arrivals outside one, with the chance that spends about `burstShare` of the time in them.
  const burstChance = ((p.burstShare / (1 - p.burstShare)) * (1000 / p.burstMs)) / p.rate;
  // Fee spikes at random times over the workload's expected length.
  const expectedMs = (p.ops / p.rate) * 1000;
  const spikes = Array.from({ length: p.feeSpikes }, () => random.next() * expectedMs).sort(
    (a, b) => a - b,
  );
  const inSpike = (at: number) => spikes.some((start) => at >= start && at < start + p.feeSpikeMs);

  const nonces = new Array<number>(senders).fill(0);
  let at = 0;
  let burstUntil = -1;
  for (let i = 0; i < p.ops; i++) {
    if (at > burstUntil && random.next() < burstChance) burstUntil = at + p.burstMs;
    const spiking = inSpike(at);
    const rate =
      p.rate * (at <= burstUntil ? p.burstFactor : 1) * (spiking ? p.feeSpikeRateFactor : 1);
    at += random.exponential(1000 / rate);
    const sender = pickSender(at);
    lastSent[sender] = at;
    const factor =
      (spiking ? p.feeSpikeFactor : 1) * (spammer && sender === 0 ? p.spammerFeeFactor : 1);
    const priority = BigInt(
      Math.max(
        1,
        Math.round(random.logNormal(p.priorityFeeGwei * 1e9 * factor, p.priorityFeeSpread)),
      ),
    );
    const headroom = BigInt(Math.round(random.logNormal(p.maxFeeHeadroomGwei * 1e9 * factor, 0.4)));
    const sponsored = random.next() < p.paymasterShare;
    add({
      at: Math.round(at),
      sender,
      nonce: nonces[sender]!++,
      maxPriorityFeePerGas: priority.toString(),
      maxFeePerGas: (priority + headroom).toString(),
      callGasLimit: String(p.callGasMin + Math.round(random.exponential(p.callGasMean))),
      ...(sponsored ? { paymaster: pickPaymaster() } : {}),
      ...(random.next() < p.failureRate ? { failsAtBundling: "AA23 reverted" } : {}),
      ...(random.next() < p.revertRate ? { reverts: true } : {}),
    });
  }
  const parts = [
    `${p.ops} ops`,
    `seed ${p.seed}`,
    `${senders} senders (Zipf ${p.senderSkew}${spammer ? `, one spammer sending ${Math.round(p.spammerShare * 100)}%` : ""})`,
    `${p.rate}/s Poisson with bursts`,
    ...(p.feeSpikes > 0 ? [`${p.feeSpikes} fee spikes of ${p.feeSpikeFactor}x`] : []),
    ...(p.paymasterShare > 0
      ? [`${Math.round(p.paymasterShare * 100)}% sponsored by ${p.paymasters} paymasters`]
      : []),
  ];
  return {
    description: `generated: ${parts.join(", ")}`,
    senders,
    ...(p.paymasterShare > 0 ? { paymasters: p.paymasters } : {}),
  };
}

/** The address of workload sender `index`. */
export function senderAddress(index: number): Address {
  return keccak256Hex(toHex(`bundlekit research sender ${index}`)).slice(0, 42) as Address;
}

/** The address of workload paymaster `index`. */
export function paymasterAddress(index: number): Address {
  return keccak256Hex(toHex(`bundlekit research paymaster ${index}`)).slice(0, 42) as Address;
}

/**
 * `value` (a workload file's JSON) as a workload, or a `RangeError` naming the first thing wrong:
 * operations in arrival order, each with whole-number `at` (ms), `sender`, `nonce` and optional
 * `paymaster`, and its fees and call gas as decimal strings.
 */
export function checkWorkload(value: unknown): Workload {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(value) || !Array.isArray(value.operations))
    throw new RangeError('must be a JSON object with an "operations" array (a workload file)');
  const given: unknown[] = value.operations;
  let senders = 0;
  let paymasters = 0;
  let previousAt = 0;
  const operations = given.map((op, i): WorkloadOperation => {
    if (!isObject(op)) throw new RangeError(`operation ${i} must be an object`);
    const whole = (field: string, optional = false) => {
      if (optional && op[field] === undefined) return;
      if (!Number.isSafeInteger(op[field]) || (op[field] as number) < 0)
        throw new RangeError(
          `operation ${i}: ${field} must be a whole number, got ${JSON.stringify(op[field])}`,
        );
    };
    whole("at");
    whole("sender");
    whole("nonce");
    whole("paymaster", true);
    for (const field of ["maxPriorityFeePerGas", "maxFeePerGas", "callGasLimit"]) {
      if (typeof op[field] !== "string" || !/^\d+$/.test(op[field]))
        throw new RangeError(
          `operation ${i}: ${field} must be a whole number as a decimal string, got ${JSON.stringify(op[field])}`,
        );
    }
    if ((op.at as number) < previousAt)
      throw new RangeError(
        `operation ${i}: at (${op.at}) is before the previous operation's (${previousAt}): operations must be in arrival order`,
      );
    previousAt = op.at as number;
    senders = Math.max(senders, (op.sender as number) + 1);
    if (op.paymaster !== undefined) paymasters = Math.max(paymasters, (op.paymaster as number) + 1);
    return {
      at: op.at as number,
      sender: op.sender as number,
      nonce: op.nonce as number,
      maxPriorityFeePerGas: op.maxPriorityFeePerGas as string,
      maxFeePerGas: op.maxFeePerGas as string,
      callGasLimit: op.callGasLimit as string,
      ...(op.paymaster !== undefined ? { paymaster: op.paymaster as number } : {}),
      ...(typeof op.failsAtBundling === "string" ? { failsAtBundling: op.failsAtBundling } : {}),
      ...(op.reverts === true ? { reverts: true } : {}),
    };
  });
  return {
    description: typeof value.description === "string" ? value.description : "a workload file",
    senders,
    ...(paymasters > 0 ? { paymasters } : {}),
    operations,
  };
}
