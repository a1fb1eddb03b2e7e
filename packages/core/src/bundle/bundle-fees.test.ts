import { describe, expect, it } from "vitest";
import type { GasPrice } from "../gas/fee-oracle.ts";
import type { UserOperationV07 } from "../userop/types.ts";
import { bumpedFees, bundleFees, repaidFees } from "./bundle-fees.ts";

/** An operation offering these fees per gas (the rest is irrelevant to fees). */
function offering(maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): UserOperationV07 {
  return {
    sender: "0x1111111111111111111111111111111111111111",
    nonce: 0n,
    callData: "0x",
    callGasLimit: 50_000n,
    verificationGasLimit: 50_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas,
    maxPriorityFeePerGas,
    signature: "0x",
  };
}

const suggested: GasPrice = { baseFeePerGas: 100n, maxFeePerGas: 300n, maxPriorityFeePerGas: 20n };

describe("bundleFees", () => {
  it("bids the fee oracle's suggestion when every operation repays more", () => {
    expect(bundleFees(suggested, [offering(500n, 50n), offering(400n, 30n)])).toEqual({
      maxFeePerGas: 300n,
      maxPriorityFeePerGas: 20n,
    });
  });

  it("never bids above the lowest maxFeePerGas and the lowest maxPriorityFeePerGas of its operations", () => {
    // The first operation caps the fee, the second the tip.
    expect(
      bundleFees(suggested, [offering(250n, 15n), offering(280n, 12n), offering(400n, 30n)]),
    ).toEqual({
      maxFeePerGas: 250n,
      maxPriorityFeePerGas: 12n,
    });
  });

  it("keeps the tip within the fee cap when an operation's fee cap is below another's tip", () => {
    expect(
      bundleFees({ ...suggested, maxPriorityFeePerGas: 200n }, [
        offering(150n, 150n),
        offering(400n, 180n),
      ]),
    ).toEqual({
      maxFeePerGas: 150n,
      maxPriorityFeePerGas: 150n,
    });
  });

  it("never bids above maxBundleFeePerGas, however much the suggestion and the operations allow", () => {
    const ops = [offering(500n, 50n), offering(400n, 30n)];
    expect(bundleFees(suggested, ops, 200n)).toEqual({
      maxFeePerGas: 200n,
      maxPriorityFeePerGas: 20n,
    });
    expect(bundleFees(suggested, ops, 10n)).toEqual({
      maxFeePerGas: 10n,
      maxPriorityFeePerGas: 10n,
    });
    expect(bundleFees(suggested, ops, 1_000n)).toEqual({
      maxFeePerGas: 300n,
      maxPriorityFeePerGas: 20n,
    });
  });
  it("bids the suggestion for a bundle of no operations", () => {
    expect(bundleFees(suggested, [])).toEqual({
      maxFeePerGas: 300n,
      maxPriorityFeePerGas: 20n,
    });
  });
});

describe("repaidFees", () => {
  it("is the lowest maxFeePerGas and the lowest maxPriorityFeePerGas, each of its own operation", () => {
    expect(repaidFees([offering(400n, 7n), offering(250n, 9n), offering(300n, 3n)])).toEqual({
      maxFeePerGas: 250n,
      maxPriorityFeePerGas: 3n,
    });
  });

  it("is 0 for no operations", () => {
    expect(repaidFees([])).toEqual({ maxFeePerGas: 0n, maxPriorityFeePerGas: 0n });
  });
});

describe("bumpedFees", () => {
  it("raises both fees by the bump percent and one wei, when that is above the suggestion", () => {
    expect(
      bumpedFees({ maxFeePerGas: 1_000n, maxPriorityFeePerGas: 100n }, suggested, 15n),
    ).toEqual({
      maxFeePerGas: 1_151n,
      maxPriorityFeePerGas: 116n,
    });
  });

  it("raises them to the suggestion when the suggestion is higher, and the fee cap to at least the tip", () => {
    expect(bumpedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, suggested, 15n)).toEqual({
      maxFeePerGas: 300n,
      maxPriorityFeePerGas: 20n,
    });
    expect(
      bumpedFees(
        { maxFeePerGas: 100n, maxPriorityFeePerGas: 10n },
        { ...suggested, maxFeePerGas: 50n, maxPriorityFeePerGas: 400n },
        15n,
      ),
    ).toEqual({
      maxFeePerGas: 400n,
      maxPriorityFeePerGas: 400n,
    });
  });

  it("raises by 10% plus 1 wei, so a node's 10% rule is met even after rounding, rounding the raise down", () => {
    // 100 × 110 / 100 + 1 = 111; 10 × 110 / 100 + 1 = 12.
    const low = { ...suggested, maxFeePerGas: 50n, maxPriorityFeePerGas: 5n };
    expect(bumpedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, low, 10n)).toEqual({
      maxFeePerGas: 111n,
      maxPriorityFeePerGas: 12n,
    });
    // 15 × 125 / 100 = 18.75 → 18, + 1 = 19; 7 × 125 / 100 = 8.75 → 8, + 1 = 9.
    const lowest = { ...suggested, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n };
    expect(bumpedFees({ maxFeePerGas: 15n, maxPriorityFeePerGas: 7n }, lowest, 25n)).toEqual({
      maxFeePerGas: 19n,
      maxPriorityFeePerGas: 9n,
    });
  });

  it("keeps maxFeePerGas at least the suggested tip when that is above the raised fee", () => {
    // Priority: max(5 × 1.1 + 1 = 6, 30) = 30; fee: max(20 × 1.1 + 1 = 23, 15, 30) = 30.
    const tipHeavy = { ...suggested, maxFeePerGas: 15n, maxPriorityFeePerGas: 30n };
    expect(bumpedFees({ maxFeePerGas: 20n, maxPriorityFeePerGas: 5n }, tipHeavy, 10n)).toEqual({
      maxFeePerGas: 30n,
      maxPriorityFeePerGas: 30n,
    });
  });
});
