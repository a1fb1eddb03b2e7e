import { describe, expect, it } from "vitest";
import type { MempoolEntry } from "../ports/mempool-store.ts";
import { type FixtureEntryOptions, fixtureEntry } from "../../../testing/src/index.ts";
import { answering } from "../../test/on-wire.ts";
import { refuseRedundantFactory } from "./queued-nonce.ts";

const pooled = async (options: FixtureEntryOptions) => ({ ...(await fixtureEntry(options)), status: "pending" }) as MempoolEntry;
const operation = async (options: FixtureEntryOptions) => (await fixtureEntry(options)).userOperation;

describe("refuseRedundantFactory", () => {
  it("refuses factory data when another pooled operation of the sender deploys it, on any nonce key (AA10, -32500)", async () => {
    const deploying = await pooled({ version: "0.6" });
    for (const nonce of [1n, 1n << 64n]) {
      expect(answering(() => refuseRedundantFactory([deploying], { ...deploying.userOperation, nonce }))).toThrow(
        expect.objectContaining({ code: -32500, message: "AA10 sender already constructed", data: { reason: "AA10 sender already constructed", deployedBy: deploying.userOpHash } }),
      );
    }
  });

  it("lets through a replacement (same nonce), an operation without factory, and EIP-7702's marker, which deploys nothing", async () => {
    const deploying = await pooled({ sponsored: true });
    expect(() => refuseRedundantFactory([deploying], { ...deploying.userOperation, maxFeePerGas: deploying.userOperation.maxFeePerGas * 2n })).not.toThrow();
    expect(() => refuseRedundantFactory([deploying], { ...deploying.userOperation, nonce: 1n, factory: undefined, factoryData: undefined })).not.toThrow();
    const delegating = await pooled({ version: "0.8", eip7702: true });
    const next = await operation({ version: "0.8", eip7702: true, nonce: 1n });
    expect(() => refuseRedundantFactory([delegating], next)).not.toThrow();
  });

  it("lets through redundant factory data on v0.9, whose EntryPoint ignores it for a sender that exists", async () => {
    const deploying = await pooled({ version: "0.9", sponsored: true });
    expect(() => refuseRedundantFactory([deploying], { ...deploying.userOperation, nonce: 1n })).not.toThrow();
  });
});
