import { createPublicClient, custom, numberToHex } from "viem";
import { describe, expect, it } from "vitest";
import { createSimulatedClock } from "../simulation/simulated-clock.ts";
import { createChainFeeOracle } from "./fee-oracle.ts";

/** A node at the ChainClient port whose base fee the test sets, counting the requests it answers. */
function fakeNode() {
  const node = { baseFee: 100n, requests: 0, failNext: false };
  const client = createPublicClient({
    transport: custom(
      {
        async request({ method }: { method: string }) {
          node.requests++;
          if (node.failNext) {
            node.failNext = false;
            throw new Error("node unavailable");
          }
          if (method === "eth_maxPriorityFeePerGas") return numberToHex(2n);
          if (method === "eth_getBlockByNumber")
            return { number: "0x1", baseFeePerGas: numberToHex(node.baseFee), transactions: [] };
          throw new Error(`unexpected ${method}`);
        },
      },
      { retryCount: 0 },
    ),
  });
  return { node, client };
}

describe("createChainFeeOracle", () => {
  it("asks the node every time by default", async () => {
    const { node, client } = fakeNode();
    const oracle = createChainFeeOracle(client);
    await oracle.getGasPrice();
    node.baseFee = 200n;
    expect((await oracle.getGasPrice()).baseFeePerGas).toBe(200n);
    expect(node.requests).toBe(4);
  });

  it("with maxAgeMs, shares one suggestion until it is that old, then asks again", async () => {
    const { node, client } = fakeNode();
    const clock = createSimulatedClock(1_000);
    const oracle = createChainFeeOracle(client, { maxAgeMs: 500, clock, markupPercent: 10 });
    const [a, b] = await Promise.all([oracle.getGasPrice(), oracle.getGasPrice()]);
    expect(a).toEqual({ baseFeePerGas: 100n, maxPriorityFeePerGas: 2n, maxFeePerGas: 222n });
    expect(b).toEqual(a);
    node.baseFee = 300n;
    await clock.advanceBy(499);
    expect((await oracle.getGasPrice()).baseFeePerGas).toBe(100n);
    expect(node.requests).toBe(2);
    await clock.advanceBy(1);
    expect((await oracle.getGasPrice()).baseFeePerGas).toBe(300n);
    expect(node.requests).toBe(4);
  });

  it("does not keep a failed request", async () => {
    const { node, client } = fakeNode();
    const oracle = createChainFeeOracle(client, {
      maxAgeMs: 10_000,
      clock: createSimulatedClock(),
    });
    node.failNext = true;
    await expect(oracle.getGasPrice()).rejects.toThrow();
    expect((await oracle.getGasPrice()).baseFeePerGas).toBe(100n);
  });
});
