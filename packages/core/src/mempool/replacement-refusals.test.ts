import { describe, expect, it } from "vitest";
import type { UserOperationStatus } from "../ports/mempool-store.ts";
import { fixtureEntry } from "../../../testing/src/index.ts";
import { answering } from "../../test/on-wire.ts";
import { erc7562Admission } from "./erc7562-admission.ts";

/** What a client is told when its replacement is refused: why, and which pooled operation it collided with. */
describe("refused replacements (erc7562Admission)", () => {
  const admit = erc7562Admission();

  it.each<[UserOperationStatus, string]>([
    [
      "bundling",
      "an operation with this sender and nonce is already being bundled and cannot be replaced",
    ],
    [
      "submitted",
      "an operation with this sender and nonce is already in a bundle transaction and cannot be replaced",
    ],
  ])("an operation %s: says so (-32602), naming it", async (status, message) => {
    const pooled = { ...(await fixtureEntry()), status, updatedAt: 0 };
    const entry = await fixtureEntry({ feeBump: 10_000_000_000n });
    expect(answering(() => admit({ entry, senderOperations: [pooled], senderStaked: false }))).toThrow(
      expect.objectContaining({ code: -32602, message, data: { replacing: pooled.userOpHash } }),
    );
  });

  it("an underpriced one: names both fees it must reach (-32602)", async () => {
    const pooled = { ...(await fixtureEntry()), status: "pending" as const, updatedAt: 0 };
    const entry = await fixtureEntry({ feeBump: 1n });
    // 31,000,000,017 × 110 / 100 = 34,100,000,018.7 and 1,500,000,000 × 110 / 100, rounded down.
    expect(answering(() => admit({ entry, senderOperations: [pooled], senderStaked: false }))).toThrow(
      expect.objectContaining({
        code: -32602,
        message:
          "replacement underpriced: an operation with this sender and nonce is pending; raise maxFeePerGas to at least 34100000018 and maxPriorityFeePerGas to at least 1650000000",
        data: { replacing: pooled.userOpHash },
      }),
    );
  });
});
