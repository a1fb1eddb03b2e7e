import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import type { UserOperationV06, UserOperationV07 } from "../userop/types.ts";
import { bundleGasOf, defaultMaxBundleGas } from "./bundle-gas.ts";

const v06: UserOperationV06 = {
  sender: "0x1111111111111111111111111111111111111111",
  nonce: 0n,
  initCode: "0x",
  callData: "0x",
  callGasLimit: 200_000n,
  verificationGasLimit: 100_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  paymasterAndData: "0x",
  signature: "0x01",
};

const v07: UserOperationV07 = {
  sender: "0x1111111111111111111111111111111111111111",
  nonce: 0n,
  callData: "0x",
  callGasLimit: 200_000n,
  verificationGasLimit: 100_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  signature: "0x01",
};
const paymaster: Address = "0x3333333333333333333333333333333333333333";

describe("gas an operation can take in handleOps (bundleGasOf)", () => {
  it("v0.6: preVerificationGas, the verification limit twice (validation, then reserved for postOp), the call limit and 5,000, grown by 64/63", () => {
    // (50,000 + 100,000 + 100,000 + 200,000 + 5,000) × 64 / 63 = 462,222.2…
    expect(bundleGasOf(v06)).toBe(462_222n);
  });

  it("v0.6 with a paymaster: the verification limit counts three times in validation (validation, postOp, postOp retry)", () => {
    // (50,000 + 300,000 + 100,000 + 200,000 + 5,000) × 64 / 63 = 665,396.8…
    expect(bundleGasOf({ ...v06, paymasterAndData: `${paymaster}1234` })).toBe(665_396n);
  });

  it("v0.7: preVerificationGas, the verification and call limits and 10,000, grown by 64/63", () => {
    // (50,000 + 100,000 + 200,000 + 10,000) × 64 / 63 = 365,714.2…
    expect(bundleGasOf(v07)).toBe(365_714n);
  });

  it("v0.7 with a paymaster: adds its verification and post-op limits", () => {
    const sponsored = {
      ...v07,
      paymaster,
      paymasterVerificationGasLimit: 30_000n,
      paymasterPostOpGasLimit: 20_000n,
      paymasterData: "0x" as const,
    };
    // (50,000 + 100,000 + 30,000 + 20,000 + 200,000 + 10,000) × 64 / 63 = 416,507.9…
    expect(bundleGasOf(sponsored)).toBe(416_507n);
  });

  it("v0.7 with only a paymaster post-op limit given counts it alone", () => {
    expect(bundleGasOf({ ...v07, paymaster, paymasterPostOpGasLimit: 20_000n })).toBe(
      ((360_000n + 20_000n) * 64n) / 63n,
    );
    expect(bundleGasOf({ ...v07, paymaster, paymasterVerificationGasLimit: 30_000n })).toBe(
      ((360_000n + 30_000n) * 64n) / 63n,
    );
  });
});

describe("the most operation gas one bundle holds (defaultMaxBundleGas)", () => {
  it("is the block gas limit less the markup, less 50,000 for the transaction itself", () => {
    // 30,000,000 × 100 / 110 = 27,272,727.2…, − 50,000.
    expect(defaultMaxBundleGas(30_000_000n, 10)).toBe(27_222_727n);
    expect(defaultMaxBundleGas(30_000_000n, 0)).toBe(29_950_000n);
  });
});
