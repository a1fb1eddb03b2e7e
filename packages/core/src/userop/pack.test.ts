import { toPackedUserOperation } from "viem/account-abstraction";
import { describe, expect, it } from "vitest";
import { outcome } from "../../test/outcome.ts";
import { randomDraws, randomOperation } from "../../test/random-operations.ts";
import { toEntryPointStruct } from "./pack.ts";
import type { UserOperationV07 } from "./types.ts";

describe("toEntryPointStruct", () => {
  it("packs v0.7+ operations as viem's toPackedUserOperation does, for 3,000 random ones, out-of-range limits and v0.9 paymaster signatures among them", () => {
    const r = randomDraws(9);
    for (let i = 0; i < 3_000; i++) {
      const op = randomOperation(r, false) as UserOperationV07;
      const field = (["verificationGasLimit", "callGasLimit", "maxFeePerGas", "maxPriorityFeePerGas", "paymasterVerificationGasLimit", "paymasterPostOpGasLimit"] as const)[r.int(6)]!;
      if (r.int(10) === 0) op[field] = [1n << 128n, -1n, 0n][r.int(3)]!;
      if (r.int(10) === 0 && op.paymaster) op.paymasterSignature = r.bytes(1 + r.int(70));
      if (r.int(10) === 0 && op.factory) delete op.factoryData;
      if (r.int(10) === 0 && op.paymaster) delete op.paymasterData;
      expect(outcome(() => toEntryPointStruct(op)), `operation ${i}`).toEqual(outcome(() => toPackedUserOperation(op)));
    }
  });
});
