import { describe, expect, it } from "vitest";
import type { GasPrice } from "../gas/fee-oracle.ts";
import type { UserOperationV07 } from "../userop/types.ts";
import { bumpedFees, bundleFees } from "./bundle-fees.ts";

/** An operation that repays at most `maxFeePerGas`, of which `maxPriorityFeePerGas` above the base fee. */
function paying(maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): UserOperationV07 {
  return {
    sender: "0x1111111111111111111111111111111111111111",
    nonce: 0n,
    callData: "0x",
    callGasLimit: 100_000n,
    verificationGasLimit: 100_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas,
    maxPriorityFeePerGas,
    signature: "0x01",
  };
}

const suggestion = (maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): GasPrice => ({
  maxFeePerGas,
  maxPriorityFeePerGas,
  baseFeePerGas: 1n,
});

describe("what a bundle bids (bundleFees)", () => {
  it("bids the oracle's suggestion when every operation repays more", () => {
    expect(bundleFees(suggestion(100n, 2n), [paying(150n, 3n), paying(120n, 5n)])).toEqual({
      maxFeePerGas: 100n,
      maxPriorityFeePerGas: 2n,
    });
  });

  it("bids no more per gas than the operation repaying least, each fee on its own", () => {
    // The lowest maxFeePerGas (80) and the lowest maxPriorityFeePerGas (1) come from different operations.
    const operations = [paying(90n, 5n), paying(80n, 4n), paying(95n, 1n), paying(99n, 3n)];
    expect(bundleFees(suggestion(100n, 10n), operations)).toEqual({
      maxFeePerGas: 80n,
      maxPriorityFeePerGas: 1n,
    });
  });

  it("caps the priority fee at the capped fee: a bid never tips more than it pays", () => {
    expect(bundleFees(suggestion(100n, 50n), [paying(30n, 40n)])).toEqual({
      maxFeePerGas: 30n,
      maxPriorityFeePerGas: 30n,
    });
  });

  it("bids the suggestion for a bundle of no operations", () => {
    expect(bundleFees(suggestion(100n, 10n), [])).toEqual({
      maxFeePerGas: 100n,
      maxPriorityFeePerGas: 10n,
    });
  });
});

describe("fees that replace a stuck bundle transaction (bumpedFees)", () => {
  it("raises both fees by the bump percent plus 1 wei, so a node's 10% rule is met even after rounding", () => {
    // 100 × 110 / 100 + 1 = 111; 10 × 110 / 100 + 1 = 12.
    expect(
      bumpedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, suggestion(50n, 5n), 10n),
    ).toEqual({ maxFeePerGas: 111n, maxPriorityFeePerGas: 12n });
  });

  it("rounds the raise down before adding 1 wei", () => {
    // 15 × 125 / 100 = 18.75 → 18, + 1 = 19; 7 × 125 / 100 = 8.75 → 8, + 1 = 9.
    expect(
      bumpedFees({ maxFeePerGas: 15n, maxPriorityFeePerGas: 7n }, suggestion(1n, 1n), 25n),
    ).toEqual({ maxFeePerGas: 19n, maxPriorityFeePerGas: 9n });
  });

  it("takes the current suggestion when it is higher than the raise", () => {
    expect(
      bumpedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, suggestion(200n, 20n), 10n),
    ).toEqual({ maxFeePerGas: 200n, maxPriorityFeePerGas: 20n });
  });

  it("keeps maxFeePerGas at least the raised priority fee", () => {
    // Priority: max(5 × 1.1 + 1 = 6, 30) = 30; fee: max(20 × 1.1 + 1 = 23, 15, 30) = 30.
    expect(
      bumpedFees({ maxFeePerGas: 20n, maxPriorityFeePerGas: 5n }, suggestion(15n, 30n), 10n),
    ).toEqual({ maxFeePerGas: 30n, maxPriorityFeePerGas: 30n });
  });
});
