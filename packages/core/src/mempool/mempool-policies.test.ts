import { describe, expect, it } from "vitest";
import { mempoolPolicyContract, policyCandidate, policyLimits } from "../../../testing/src/index.ts";
import { createFairMempoolPolicy } from "./fair-mempool-policy.ts";
import { createFifoMempoolPolicy } from "./fifo-mempool-policy.ts";
import { mempoolPolicies, mempoolPolicyNames } from "./mempool-policies.ts";
import { createProfitMempoolPolicy } from "./profit-mempool-policy.ts";

for (const name of mempoolPolicyNames) mempoolPolicyContract(name, () => mempoolPolicies[name]());

describe("fifo", () => {
  it("takes operations in arrival order, whatever they pay", async () => {
    const [late, early, middle] = await Promise.all([
      policyCandidate({ sender: 1, receivedAt: 30, maxPriorityFeePerGas: 99n }),
      policyCandidate({ sender: 2, receivedAt: 10, maxPriorityFeePerGas: 1n }),
      policyCandidate({ sender: 3, receivedAt: 20, maxPriorityFeePerGas: 50n }),
    ]);
    expect(createFifoMempoolPolicy().select([late!, early!, middle!], policyLimits({ maxOperations: 2 }))).toEqual([early, middle]);
  });
});

describe("fair", () => {
  it("serves first the senders it served longest ago, so one sender cannot take every bundle", async () => {
    const policy = createFairMempoolPolicy();
    const limits = policyLimits({ maxOperations: 1 });
    // Sender 1 always arrives first and pays most; senders 2 and 3 still get their turns.
    const round = () =>
      Promise.all([
        policyCandidate({ sender: 1, receivedAt: 1, maxPriorityFeePerGas: 99n }),
        policyCandidate({ sender: 2, receivedAt: 2 }),
        policyCandidate({ sender: 3, receivedAt: 3 }),
      ]);
    const served: string[] = [];
    for (let i = 0; i < 6; i++) {
      const [chosen] = policy.select(await round(), limits);
      served.push(chosen!.userOperation.sender);
    }
    const [one, two, three] = (await round()).map((c) => c.userOperation.sender);
    expect(served).toEqual([one, two, three, one, two, three]);
  });
});

describe("profit", () => {
  it("ranks by the tip earned at the block's base fee, not by the priority fee offered", async () => {
    const baseFeePerGas = 1_000n;
    const [capped, modest] = await Promise.all([
      // Offers a priority fee of 500 but its max fee leaves only 10 above the base fee.
      policyCandidate({ sender: 1, maxPriorityFeePerGas: 500n, maxFeePerGas: 1_010n }),
      policyCandidate({ sender: 2, maxPriorityFeePerGas: 100n, maxFeePerGas: 5_000n }),
    ]);
    const limits = policyLimits({ maxOperations: 1, block: { number: 1n, baseFeePerGas, timestamp: 1n } });
    expect(createProfitMempoolPolicy().select([capped!, modest!], limits)).toEqual([modest]);
    expect(mempoolPolicies.default().select([capped!, modest!], limits)).toEqual([capped]);
  });

  it("packs smaller operations into room a larger one leaves", async () => {
    const [big, small, smaller] = await Promise.all([
      policyCandidate({ sender: 1, maxPriorityFeePerGas: 30n, maxFeePerGas: 5_000n }),
      policyCandidate({ sender: 2, maxPriorityFeePerGas: 20n, maxFeePerGas: 5_000n }),
      policyCandidate({ sender: 3, maxPriorityFeePerGas: 10n, maxFeePerGas: 5_000n }),
    ]);
    const gas = new Map([
      [big!, 700n],
      [small!, 400n],
      [smaller!, 300n],
    ]);
    const chosen = createProfitMempoolPolicy().select([big!, small!, smaller!], policyLimits({ gasBudget: 1_000n, gasOf: (e) => gas.get(e)! }));
    expect(chosen).toEqual([big, smaller]);
  });
});

describe("eviction when the pool is full", () => {
  const pool = () =>
    Promise.all([
      policyCandidate({ sender: 1, receivedAt: 1, maxPriorityFeePerGas: 5n }),
      policyCandidate({ sender: 1, receivedAt: 2, maxPriorityFeePerGas: 9n }),
      policyCandidate({ sender: 2, receivedAt: 3, maxPriorityFeePerGas: 5n }),
      policyCandidate({ sender: 3, receivedAt: 4, maxPriorityFeePerGas: 1n }),
    ]);
  const evicted = async (name: keyof typeof mempoolPolicies) => {
    const pending = await pool();
    return mempoolPolicies[name]().evict!(pending, { excess: 2, now: 10 }).map((e) => pending.indexOf(e));
  };

  it("default and profit: the lowest priority fee first, the newest among equals", async () => {
    expect(await evicted("default")).toEqual([3, 2]);
    expect(await evicted("profit")).toEqual([3, 2]);
  });

  it("fifo: the newest first", async () => {
    expect(await evicted("fifo")).toEqual([3, 2]);
  });

  it("fair: the sender holding the most operations first, its newest first", async () => {
    expect(await evicted("fair")).toEqual([1, 0]);
  });
});
