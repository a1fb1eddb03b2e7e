import { describe, expect, it } from "vitest";
import { generatePackedWorkload, packOperations, packWorkload } from "../src/packed-workload.ts";
import { generateWorkload, type WorkloadOperation } from "../src/workload.ts";

describe("packWorkload", () => {
  it("gives back every operation as it was: paymasters, failures, reverts and amounts no double writes", () => {
    const workload = generateWorkload({ ops: 3_000, seed: 2, paymasterShare: 0.3, failureRate: 0.1, revertRate: 0.1 });
    const packed = packWorkload(workload);
    expect(packed.operations.length).toBe(3_000);
    expect(Array.from({ length: 3_000 }, (_, i) => packed.operations.operation(i))).toEqual(workload.operations);

    const odd: WorkloadOperation[] = [
      { at: 0, sender: 0, nonce: 0, maxPriorityFeePerGas: "1", maxFeePerGas: "115792089237316195423570985008687907853269984665640564039457584007913129639935", callGasLimit: "9007199254740993" },
      { at: 5, sender: 1, nonce: 7, maxPriorityFeePerGas: "0", maxFeePerGas: "0100", callGasLimit: "1e3", failsAtBundling: "AA24 signature error", reverts: true, paymaster: 2 },
    ];
    const ops = packOperations(odd);
    expect([ops.operation(0), ops.operation(1)]).toEqual(odd);
    expect(ops.amount("maxFeePerGas", 0)).toBe(odd[0]!.maxFeePerGas);
  });

  it("generates, packed as drawn, the workload generateWorkload generates", () => {
    for (const parameters of [{ ops: 2_000, seed: 3 }, { ops: 1_500, seed: 4, paymasterShare: 0.5, spammerShare: 0.2, feeSpikes: 2, failureRate: 0.2 }]) {
      const { operations, ...rest } = generateWorkload(parameters);
      const packed = generatePackedWorkload(parameters);
      const { operations: packedOperations, ...packedRest } = packed;
      expect(packedRest).toEqual(rest);
      expect(Array.from({ length: packedOperations.length }, (_, i) => packedOperations.operation(i))).toEqual(operations);
    }
    expect(() => generatePackedWorkload({ ops: 0, seed: 1 })).toThrow(RangeError);
  });
});
