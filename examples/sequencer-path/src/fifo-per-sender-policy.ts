import { erc7562Admission, fillBudget, type MempoolPolicy } from "@bundlekit/core";

/**
 * The operator's own ordering: first come, first served, and no sender gets more than `cap`
 * operations into any `window` consecutive blocks, however early it queues them.
 */
export function createFifoPerSenderPolicy({ cap = 2, window = 4 } = {}): MempoolPolicy {
  /** Per sender, the blocks its chosen operations went into. */
  const served = new Map<string, bigint[]>();
  return {
    name: "fifo-per-sender",
    admit: erc7562Admission(),
    select(candidates, limits) {
      const since = limits.block.number - BigInt(window) + 1n;
      const recent = (sender: string) => (served.get(sender) ?? []).filter((block) => block >= since);
      const eligible = [...candidates]
        .filter((c) => recent(c.userOperation.sender.toLowerCase()).length < cap)
        .sort((a, b) => a.receivedAt - b.receivedAt || (a.userOpHash < b.userOpHash ? -1 : 1));
      const chosen = fillBudget(eligible, limits);
      for (const { userOperation } of chosen) {
        const sender = userOperation.sender.toLowerCase();
        served.set(sender, [...recent(sender), limits.block.number]);
      }
      return chosen;
    },
  };
}
