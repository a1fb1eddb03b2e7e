import { describe, expect, it } from "vitest";
import type { UserOperationV06, UserOperationV07 } from "../userop/types.ts";
import { bundleGasOf, defaultMaxBundleGas } from "./bundle-gas.ts";

const limits = {
  preVerificationGas: 50_000n,
  verificationGasLimit: 100_000n,
  callGasLimit: 200_000n,
};
const fees = { maxFeePerGas: 2n, maxPriorityFeePerGas: 1n };
const sender = "0x1111111111111111111111111111111111111111";
const v06 = (paymasterAndData: `0x${string}`): UserOperationV06 => ({
  sender,
  nonce: 0n,
  initCode: "0x",
  callData: "0x",
  paymasterAndData,
  signature: "0x",
  ...limits,
  ...fees,
});

describe("bundleGasOf: what handleOps may spend on an operation, 64/63 of its limits and the EntryPoint's reserve", () => {
  it("v0.6 without a paymaster: verification twice (postOp's reserve) and 5,000", () => {
    expect(bundleGasOf(v06("0x"))).toBe(
      ((50_000n + 2n * 100_000n + 200_000n + 5_000n) * 64n) / 63n,
    );
  });

  it("v0.6 with a paymaster: verification four times (validation, postOp and its retry, the reserve)", () => {
    expect(bundleGasOf(v06("0x2222222222222222222222222222222222222222"))).toBe(
      ((50_000n + 4n * 100_000n + 200_000n + 5_000n) * 64n) / 63n,
    );
  });

  it("v0.7+: each limit once, the paymaster's too, and 10,000", () => {
    const op: UserOperationV07 = {
      sender,
      nonce: 0n,
      callData: "0x",
      signature: "0x",
      ...limits,
      ...fees,
      paymaster: sender,
      paymasterVerificationGasLimit: 30_000n,
      paymasterPostOpGasLimit: 20_000n,
    };
    expect(bundleGasOf(op)).toBe(
      ((50_000n + 100_000n + 30_000n + 20_000n + 200_000n + 10_000n) * 64n) / 63n,
    );
  });
});

describe("defaultMaxBundleGas", () => {
  it("leaves room in the block for bundleGasLimitMarkup and the transaction's own 50,000", () => {
    expect(defaultMaxBundleGas(30_000_000n, 20n)).toBe(24_950_000n);
    expect(defaultMaxBundleGas(30_000_000n, 0n)).toBe(29_950_000n);
  });
});
