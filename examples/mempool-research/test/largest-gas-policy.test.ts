import { mempoolPolicyContract, policyCandidate, policyLimits } from "@bundlekit/testing";
import { describe, expect, it } from "vitest";
import { createLargestGasPolicy } from "../policies/largest-gas.ts";

// The contract every policy owes the engine (docs/research.md): no database, no chain.
mempoolPolicyContract("largest-gas", () => createLargestGasPolicy());

describe("largest-gas", () => {
  it("takes the operations with the most gas first, whatever they pay", async () => {
    const [small, large, middle] = await Promise.all(
      [1, 2, 3].map((sender) =>
        policyCandidate({ sender, maxPriorityFeePerGas: BigInt(100 - sender) }),
      ),
    );
    large!.userOperation.callGasLimit = 900_000n;
    middle!.userOperation.callGasLimit = 500_000n;
    small!.userOperation.callGasLimit = 10_000n;
    expect(
      createLargestGasPolicy().select(
        [small!, large!, middle!],
        policyLimits({ maxOperations: 2 }),
      ),
    ).toEqual([large, middle]);
  });
});
