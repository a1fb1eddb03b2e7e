import { mempoolPolicyContract, policyCandidate, policyLimits } from "@bundlekit/testing";
import { describe, expect, it } from "vitest";
import { createFifoPerSenderPolicy } from "../src/fifo-per-sender-policy.ts";

mempoolPolicyContract("fifo-per-sender (the sequencer's own)", () => createFifoPerSenderPolicy());

describe("fifo-per-sender policy", () => {
  it("serves in arrival order, and holds a sender back once it had `cap` operations in the last `window` blocks", async () => {
    const policy = createFifoPerSenderPolicy({ cap: 2, window: 3 });
    const atBlock = (number: bigint) => policyLimits({ block: { number, baseFeePerGas: 1n, timestamp: number } });
    const round = () => Promise.all([policyCandidate({ sender: 1, receivedAt: 1 }), policyCandidate({ sender: 2, receivedAt: 2 })]);
    const senders = async (number: bigint) => policy.select(await round(), atBlock(number)).map((c) => c.userOperation.sender);
    const [one, two] = (await round()).map((c) => c.userOperation.sender);
    expect(await senders(10n)).toEqual([one, two]);
    expect(await senders(11n)).toEqual([one, two]);
    expect(await senders(12n)).toEqual([]); // both had 2 in blocks 10-12
    expect(await senders(13n)).toEqual([one, two]); // block 10 left the window
  });
});
