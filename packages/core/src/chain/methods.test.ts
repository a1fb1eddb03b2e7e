import { readFileSync } from "node:fs";
import { type Hash, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { createSimulatedChain } from "../simulation/simulated-chain.ts";
import { createSimulatedClock } from "../simulation/simulated-clock.ts";
import { type ChainMethodName, chainMethods } from "./methods.ts";

/** Parameters each method is asked with: well-formed enough to be answered, not refused for its form. */
const parameters: Partial<Record<ChainMethodName, unknown[]>> = {
  eth_getBlockByNumber: ["latest", false],
  eth_call: [{ to: zeroAddress, data: "0x" }, "latest"],
  eth_estimateGas: [{ to: zeroAddress, data: "0x" }, "latest"],
  eth_getTransactionCount: [zeroAddress, "latest"],
  eth_getBalance: [zeroAddress, "latest"],
  eth_sendRawTransaction: ["0x00"],
  eth_getTransactionReceipt: [zeroHash],
  eth_getTransactionByHash: [zeroHash],
  eth_getLogs: [{ topics: [zeroHash as Hash] }],
};

describe("the chain the engine needs", () => {
  it("is what the simulated chain serves: every method no setting singles out, and none of the others (-32601)", async () => {
    const chain = createSimulatedChain({ clock: createSimulatedClock(0) });
    const served = async (method: ChainMethodName) => {
      try {
        await chain.client.request<{ Parameters: unknown[]; ReturnType: unknown }>({
          method,
          params: parameters[method] ?? [],
        });
        return "served";
      } catch (error) {
        return (error as { code?: number }).code === -32601 ? "not served" : "served";
      }
    };
    try {
      const names = Object.keys(chainMethods) as ChainMethodName[];
      const outcomes = Object.fromEntries(
        await Promise.all(names.map(async (method) => [method, await served(method)])),
      );
      expect(outcomes).toEqual(
        Object.fromEntries(
          names.map((method) => [
            method,
            "needs" in chainMethods[method] ? "not served" : "served",
          ]),
        ),
      );
    } finally {
      chain.stop();
    }
  });

  it("is the table in docs/architecture.md: the same methods, the same ones tied to a setting", () => {
    const doc = readFileSync(new URL("../../../../docs/architecture.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## The chain the engine needs"));
    const rows = section
      .slice(0, section.indexOf("\n## "))
      .matchAll(/^\| `(\w+)` \|.*\| *([^|]*?) *\|$/gm);
    const documented = Object.fromEntries(
      [...rows].map(([, method, only]) => [method, only !== ""]),
    );
    expect(documented).toEqual(
      Object.fromEntries(
        Object.entries(chainMethods).map(([method, entry]) => [method, "needs" in entry]),
      ),
    );
  });
});
