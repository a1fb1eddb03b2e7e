import { BundlerConfigError, mempoolPolicies } from "@bundlekit/core";
import { describe, expect, it } from "vitest";
import { replay } from "../src/replay.ts";
import { generateWorkload, type Workload } from "../src/workload.ts";

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe("mempool research lab: workloads", () => {
  it("generates the same workload for the same seed, and another for another seed", () => {
    const a = generateWorkload({ ops: 300, seed: 7 });
    expect(generateWorkload({ ops: 300, seed: 7 })).toEqual(a);
    expect(generateWorkload({ ops: 300, seed: 8 }).operations).not.toEqual(a.operations);
    expect(a.operations.map((op) => op.at)).toEqual(
      [...a.operations.map((op) => op.at)].sort((x, y) => x - y),
    );
    // Heavy-tailed: the busiest sender sends far more than the median one.
    const counts = new Map<number, number>();
    for (const op of a.operations) counts.set(op.sender, (counts.get(op.sender) ?? 0) + 1);
    const sorted = [...counts.values()].sort((x, y) => y - x);
    expect(sorted[0]!).toBeGreaterThan(5 * sorted[Math.floor(sorted.length / 2)]!);
  });

  it("follows its knobs: rate, senders, a spammer's share, paymaster share, fee spikes, gas and fees", () => {
    const ops = 3_000;
    const base = generateWorkload({
      ops,
      seed: 1,
      rate: 100,
      burstShare: 0,
      senders: 50,
      senderSkew: 0,
      senderGapMs: 0,
      priorityFeeGwei: 2,
      priorityFeeSpread: 0.1,
      callGasMin: 30_000,
      callGasMean: 10_000,
    });
    const seconds = base.operations.at(-1)!.at / 1000;
    expect(ops / seconds).toBeGreaterThan(90);
    expect(ops / seconds).toBeLessThan(110);
    expect(base.senders).toBe(50);
    expect(new Set(base.operations.map((op) => op.sender)).size).toBe(50);
    const priorities = base.operations
      .map((op) => Number(op.maxPriorityFeePerGas) / 1e9)
      .sort((a, b) => a - b);
    expect(priorities[ops / 2]).toBeGreaterThan(1.9);
    expect(priorities[ops / 2]).toBeLessThan(2.1);
    const callGas = base.operations.map((op) => Number(op.callGasLimit));
    expect(Math.min(...callGas)).toBeGreaterThanOrEqual(30_000);
    expect(callGas.reduce((a, b) => a + b, 0) / ops).toBeGreaterThan(38_000);
    expect(callGas.reduce((a, b) => a + b, 0) / ops).toBeLessThan(42_000);
    expect(base.operations.some((op) => op.paymaster !== undefined)).toBe(false);

    const spammy = generateWorkload({ ops, seed: 1, spammerShare: 0.3, spammerFeeFactor: 3 });
    const fromSpammer = spammy.operations.filter((op) => op.sender === 0);
    expect(fromSpammer.length / ops).toBeGreaterThan(0.27);
    expect(fromSpammer.length / ops).toBeLessThan(0.33);

    const sponsored = generateWorkload({ ops, seed: 1, paymasterShare: 0.8, paymasters: 3 });
    expect(sponsored.paymasters).toBe(3);
    const share = sponsored.operations.filter((op) => op.paymaster !== undefined).length / ops;
    expect(share).toBeGreaterThan(0.77);
    expect(share).toBeLessThan(0.83);
    expect(
      new Set(sponsored.operations.map((op) => op.paymaster).filter((p) => p !== undefined)),
    ).toEqual(new Set([0, 1, 2]));

    const spiky = generateWorkload({
      ops,
      seed: 1,
      feeSpikes: 3,
      feeSpikeFactor: 20,
      priorityFeeSpread: 0.1,
    });
    const high = spiky.operations.filter((op) => Number(op.maxPriorityFeePerGas) > 10e9);
    expect(high.length).toBeGreaterThan(100);
    expect(spiky.description).toContain("3 fee spikes of 20x");
  });

  it("keeps each sender's operations apart by senderGapMs, as wallets that wait for their last operation", () => {
    const { operations } = generateWorkload({
      ops: 2_000,
      seed: 3,
      senderGapMs: 2_000,
      burstShare: 0,
    });
    const last = new Map<number, number>();
    let tooSoon = 0;
    for (const op of operations) {
      if (op.at - (last.get(op.sender) ?? Number.NEGATIVE_INFINITY) < 2_000) tooSoon++;
      last.set(op.sender, op.at);
    }
    // A sender drawn too soon is drawn again: with senders enough for the rate, none sends within the gap.
    expect(tooSoon).toBe(0);
  });

  it.each([
    [{ rate: 0 }, "rate must be above 0, got 0"],
    [{ burstShare: 1 }, "burstShare must be in [0, 1), got 1"],
    [{ paymasterShare: 1.5 }, "paymasterShare must be in [0, 1], got 1.5"],
    [{ senders: 0 }, "senders must be a positive integer, got 0"],
  ])("refuses %j, naming the parameter", (parameters, message) => {
    expect(() => generateWorkload({ ops: 10, seed: 1, ...parameters })).toThrow(
      new RangeError(message),
    );
  });
});

describe("mempool research lab: replays", () => {
  it("replays a workload through the real engine: every operation included, dropped or refused, failures dropped with their reason", async () => {
    const workload = generateWorkload({ ops: 200, seed: 3, failureRate: 0.1, revertRate: 0.1 });
    const report = await replay(workload, mempoolPolicies.default);
    expect(report.included + sum(report.dropped)).toBe(report.admitted);
    expect(report.admitted + sum(report.refused) + report.unsettled).toBe(200);
    expect(report.unsettled).toBe(0);
    expect(report.dropped["AA23 reverted"]).toBeGreaterThan(0);
    expect(report.reverted).toBeGreaterThan(0);
    expect(report.latencySeconds.p50).toBeGreaterThan(0);
    expect(report.latencySeconds.p99).toBeGreaterThanOrEqual(report.latencySeconds.p95);
    expect(BigInt(report.revenue.earned)).toBeGreaterThan(0n);
    expect(BigInt(report.revenue.net)).toBe(
      BigInt(report.revenue.earned) - BigInt(report.revenue.gasPaid),
    );
    expect(report.fairness).toBeGreaterThan(0);
    expect(report.fairness).toBeLessThanOrEqual(1);
    // Per operation, the outcomes the statistics resample add up to the report.
    expect(report.outcomes.kind.filter((k) => k === 2).length).toBe(report.included);
    expect(report.outcomes.earnedWei.reduce((a, b) => a + b, 0)).toBeCloseTo(
      Number(report.revenue.earned),
      -6,
    );
    // Deterministic: the same workload and policy give the same outcome.
    const again = await replay(workload, mempoolPolicies.default);
    expect({ ...again, wallSeconds: 0 }).toEqual({ ...report, wallSeconds: 0 });
  });

  it("replays on the simulated chain of EntryPoint v0.8 and v0.9 as on v0.7: the same operations admitted and included", async () => {
    const workload = generateWorkload({ ops: 120, seed: 5 });
    const on07 = await replay(workload, mempoolPolicies.default());
    for (const entryPointVersion of ["0.8", "0.9"] as const) {
      const report = await replay(workload, mempoolPolicies.default(), { entryPointVersion });
      expect({ admitted: report.admitted, included: report.included, dropped: report.dropped }).toEqual({ admitted: on07.admitted, included: on07.included, dropped: on07.dropped });
      expect(report.included).toBeGreaterThan(0);
    }
  });

  it("holds a sender's operations beyond ERC-7562's per-sender limit until it has room (pacing), or, without pacing, shows the pool refusing them and why", async () => {
    // One sender sends ten operations at once, and nine others one each.
    const operations = [
      ...Array.from({ length: 10 }, (_, nonce) => ({ at: nonce, sender: 0, nonce })),
      ...Array.from({ length: 9 }, (_, i) => ({ at: 20 + i, sender: i + 1, nonce: 0 })),
    ].map((op) => ({
      ...op,
      maxPriorityFeePerGas: "1000000000",
      maxFeePerGas: "5000000000",
      callGasLimit: "50000",
    }));
    const workload: Workload = { description: "one busy sender", senders: 10, operations };

    const paced = await replay(workload, mempoolPolicies.default);
    expect(paced.refused).toEqual({});
    expect(paced.held).toBe(6);
    expect(paced.included).toBe(19);

    const unpaced = await replay(workload, mempoolPolicies.default, { pacing: false });
    expect(unpaced.held).toBe(0);
    expect(unpaced.refused).toEqual({
      "-32504 sender <address> already has 4 operations in the mempool, the most an unstaked sender may have; wait for one to be included": 6,
    });
    expect(unpaced.included).toBe(13);

    // The limit is the engine's setting.
    const wider = await replay(workload, mempoolPolicies.default, {
      pacing: false,
      settings: { mempool: { sameSenderCount: 10 } },
    });
    expect(wider.refused).toEqual({});
  });

  it("takes engine settings and the chain's block time and gas limit", async () => {
    const workload = generateWorkload({ ops: 150, seed: 2, rate: 100, failureRate: 0 });
    const small = await replay(workload, mempoolPolicies.fifo, {
      settings: { bundling: { maxOperations: 3 } },
    });
    expect(small.operationsPerBundle).toBeLessThanOrEqual(3);
    expect(small.bundles).toBeGreaterThanOrEqual(50);

    const slow = await replay(workload, mempoolPolicies.fifo, { blockTimeMs: 4_000 });
    expect(slow.latencySeconds.p50).toBeGreaterThanOrEqual(4);
    // A 1.5M-gas block holds bundles of 1.2M gas of operation limits (the default 20% markup): five or fewer of these.
    const narrow = await replay(workload, mempoolPolicies.fifo, { blockGasLimit: 1_500_000n });
    expect(narrow.operationsPerBundle).toBeLessThanOrEqual(5);
    expect(narrow.blockFullness).toBeGreaterThan(5 * slow.blockFullness);

    await expect(
      replay(workload, mempoolPolicies.fifo, { settings: { bundling: { maxOperations: 0 } } }),
    ).rejects.toThrow(
      new BundlerConfigError(
        "bundling.maxOperations",
        'must be an integer from 1 to 9007199254740991, got "0"',
      ),
    );
    await expect(
      replay(workload, mempoolPolicies.fifo, { settings: { validation: { mode: "safe" } } }),
    ).rejects.toThrow(/validation.mode must be unsafe in the lab/);
  });

  it("replays sponsored operations: a staked paymaster carries many, unless it is seen far more than included (throttled); an unstaked one is held to UREP-020", async () => {
    const workload = generateWorkload({
      ops: 300,
      seed: 4,
      rate: 20,
      paymasterShare: 1,
      paymasters: 1,
      failureRate: 0,
    });
    const staked = await replay(workload, mempoolPolicies.default);
    expect(staked.refused).toEqual({});
    expect(staked.included).toBe(300);

    // 300 in 3 s: seen / 10 outruns included + 10 (ERC-7562 throttling), and the paymaster gets 4 in the pool at most.
    const rushed = await replay(
      generateWorkload({
        ops: 300,
        seed: 4,
        rate: 100,
        paymasterShare: 1,
        paymasters: 1,
        failureRate: 0,
      }),
      mempoolPolicies.default,
    );
    expect(Object.keys(rushed.refused)).toEqual(["-32504 paymaster <address> is throttled"]);

    const unstaked = await replay(workload, mempoolPolicies.default, { stakedPaymasters: false });
    const limited = Object.entries(unstaked.refused).find(([reason]) =>
      reason.includes("UREP-020"),
    );
    expect(limited?.[0]).toMatch(
      /^-32504 unstaked paymaster <address> already has \d+ operations in the mempool/,
    );
    expect(unstaked.included).toBeLessThan(300);
  });
});
