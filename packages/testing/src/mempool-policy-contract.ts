import { describe, expect, it } from "vitest";
import { type BundleLimits, BundlerError, type MempoolEntry, type MempoolPolicy } from "@bundlekit/core";
import { fixtureEntry } from "./fixtures.ts";

/** A pooled candidate of fixture sender `sender`, with fees and arrival as given. */
export async function policyCandidate(options: {
  sender: number;
  receivedAt?: number;
  maxPriorityFeePerGas?: bigint;
  maxFeePerGas?: bigint;
}): Promise<MempoolEntry> {
  const entry = await fixtureEntry({ sender: options.sender, receivedAt: options.receivedAt ?? options.sender });
  if (options.maxPriorityFeePerGas !== undefined) entry.userOperation.maxPriorityFeePerGas = options.maxPriorityFeePerGas;
  if (options.maxFeePerGas !== undefined) entry.userOperation.maxFeePerGas = options.maxFeePerGas;
  return { ...entry, status: "bundling", updatedAt: entry.receivedAt };
}

/** Bundle limits for policy tests: roomy unless overridden, each operation 100 gas. */
export function policyLimits(overrides: Partial<BundleLimits> = {}): BundleLimits {
  return {
    gasBudget: 1_000_000n,
    maxOperations: 1_000,
    gasOf: () => 100n,
    block: { number: 100n, baseFeePerGas: 1_000n, timestamp: 1_750_000_000n },
    ...overrides,
  };
}

/**
 * What every `MempoolPolicy` owes the engine, as a vitest suite: bundles within their limits,
 * made only of the candidates offered, each once, and never empty while something fits; and
 * ERC-7562 admission of a sender's first operation, and of one with a pooled operation's nonce. Each policy runs it (`makePolicy` gives a
 * fresh one per test); what makes a policy different is tested beside it.
 */
export function mempoolPolicyContract(name: string, makePolicy: () => MempoolPolicy): void {
  describe(`MempoolPolicy contract: ${name}`, () => {
    const candidates = (count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          policyCandidate({ sender: i + 1, receivedAt: 1_000 + ((i * 7) % count), maxPriorityFeePerGas: BigInt(10 + ((i * 3) % 5)), maxFeePerGas: 5_000n }),
        ),
      );

    it("chooses only offered candidates, each once", async () => {
      const offered = await candidates(12);
      const chosen = makePolicy().select(offered, policyLimits());
      expect(chosen.every((c) => offered.includes(c))).toBe(true);
      expect(new Set(chosen).size).toBe(chosen.length);
    });

    it("takes everything when everything fits", async () => {
      const offered = await candidates(12);
      expect(new Set(makePolicy().select(offered, policyLimits()))).toEqual(new Set(offered));
    });

    it("keeps within the gas budget and the operation count", async () => {
      const offered = await candidates(12);
      const gasOf = (e: MempoolEntry) => BigInt(100 + Number(e.userOperation.maxPriorityFeePerGas));
      const byGas = makePolicy().select(offered, policyLimits({ gasBudget: 500n, gasOf }));
      expect(byGas.reduce((sum, e) => sum + gasOf(e), 0n)).toBeLessThanOrEqual(500n);
      expect(byGas.length).toBeGreaterThanOrEqual(3);
      expect(makePolicy().select(offered, policyLimits({ maxOperations: 5 }))).toHaveLength(5);
    });

    it("makes progress: never an empty bundle while a candidate fits", async () => {
      const offered = await candidates(3);
      const gasOf = (e: MempoolEntry) => (e === offered[1] ? 50n : 400n);
      expect(makePolicy().select(offered, policyLimits({ gasBudget: 60n, gasOf }))).toEqual([offered[1]]);
      expect(makePolicy().select([], policyLimits())).toEqual([]);
    });

    it("chooses the same bundle for the same candidates, whatever order they come in", async () => {
      const offered = await candidates(12);
      const limits = policyLimits({ maxOperations: 6 });
      const forward = makePolicy().select(offered, limits);
      const backward = makePolicy().select([...offered].reverse(), limits);
      expect(backward).toEqual(forward);
    });

    it("evicts, when the pool is over capacity, exactly the excess, from the pending operations offered", async ({ skip }) => {
      const policy = makePolicy();
      if (!policy.evict) return skip("the policy leaves eviction to the engine's default");
      const pending = await candidates(12);
      const evicted = policy.evict(pending, { excess: 5, now: 2_000 });
      expect(evicted).toHaveLength(5);
      expect(new Set(evicted).size).toBe(5);
      expect(evicted.every((e) => pending.includes(e))).toBe(true);
      expect(policy.evict(pending, { excess: 0, now: 2_000 })).toEqual([]);
    });

    it("admits a sender's first operation, replacing nothing", async () => {
      const entry = await fixtureEntry({ sender: 1 });
      expect(makePolicy().admit({ entry, senderOperations: [], senderStaked: false })).toEqual({ replaces: undefined });
    });

    it("replaces a pooled operation with the same sender and nonce, or refuses: never keeps both", async () => {
      const pooled = { ...(await fixtureEntry({ sender: 1 })), status: "pending" as const, updatedAt: 0 };
      for (const feeBump of [0n, 10n ** 12n]) {
        const entry = await fixtureEntry({ sender: 1, feeBump, variant: 1 });
        try {
          expect(makePolicy().admit({ entry, senderOperations: [pooled], senderStaked: false })).toEqual({ replaces: pooled });
        } catch (error) {
          expect(error).toBeInstanceOf(BundlerError);
        }
      }
    });
  });
}
