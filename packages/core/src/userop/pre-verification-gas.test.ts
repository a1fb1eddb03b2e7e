import { concat, encodeFunctionData, type Hex, parseAbi, parseGwei } from "viem";
import { describe, expect, it } from "vitest";
import type { UserOperationV07 } from "./types.ts";
import {
  calculatePreVerificationGas,
  defaultPreVerificationGasConfig,
} from "./pre-verification-gas.ts";

const executeAbi = parseAbi(["function execute(address target, uint256 value, bytes data)"]);
const nonzero = (bytes: number): Hex => `0x${"ab".repeat(bytes)}`;

/** A deployed account's v0.7+ operation calling `target` with `data`, signed (65 bytes). */
function operation(data: Hex = "0x"): UserOperationV07 {
  return {
    sender: "0x1111111111111111111111111111111111111111",
    nonce: 7n,
    callData: encodeFunctionData({
      abi: executeAbi,
      args: ["0x2222222222222222222222222222222222222222", 1n, data],
    }),
    callGasLimit: 50_000n,
    verificationGasLimit: 80_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: parseGwei("2"),
    maxPriorityFeePerGas: parseGwei("1"),
    signature: nonzero(65),
  };
}

/** Verification gas at which the standard calldata price applies to `operation()` (execution outweighs the floor). */
const standard = 100_000n;
/** 8 KiB of nonzero calldata with no verification gas: the EIP-7623 floor applies. */
const floorBound = () => operation(nonzero(8192));

const authorization = {
  address: "0x3333333333333333333333333333333333333333",
  chainId: 31337,
  nonce: 0,
  r: `0x${"11".repeat(32)}`,
  s: `0x${"22".repeat(32)}`,
  yParity: 0,
} as const;

describe("calculatePreVerificationGas", () => {
  it("charges 25,000 gas for an EIP-7702 authorization at the standard calldata price", () => {
    const without = calculatePreVerificationGas(operation(), standard, "0.8");
    const withAuthorization = calculatePreVerificationGas(
      { ...operation(), authorization },
      standard,
      "0.8",
    );
    expect(withAuthorization - without).toBe(25_000n);
  });

  it("charges nothing for the authorization under the EIP-7623 floor, which the transaction pays instead", () => {
    const without = calculatePreVerificationGas(floorBound(), 0n, "0.8");
    expect(calculatePreVerificationGas({ ...floorBound(), authorization }, 0n, "0.8")).toBe(
      without,
    );
  });

  it("charges 64 more nonzero calldata bytes 16 gas each and 9.5 per word at the standard price, 40 each under the floor", () => {
    const more = (op: UserOperationV07): UserOperationV07 => ({
      ...op,
      callData: concat([op.callData, nonzero(64)]),
    });
    expect(
      calculatePreVerificationGas(more(operation()), standard, "0.8") -
        calculatePreVerificationGas(operation(), standard, "0.8"),
    ).toBe(64n * 16n + 19n);
    expect(
      calculatePreVerificationGas(more(floorBound()), 0n, "0.8") -
        calculatePreVerificationGas(floorBound(), 0n, "0.8"),
    ).toBe(64n * 40n);
  });

  it("lowers preVerificationGas by each gas the validation uses under the floor, and not at the standard price", () => {
    expect(
      calculatePreVerificationGas(floorBound(), 10_000n, "0.8") -
        calculatePreVerificationGas(floorBound(), 11_000n, "0.8"),
    ).toBe(1_000n);
    expect(calculatePreVerificationGas(operation(), standard, "0.8")).toBe(
      calculatePreVerificationGas(operation(), standard + 1_000n, "0.8"),
    );
  });

  it("charges a v0.7 operation 2,150 gas more than a v0.8 one, for v0.7's reentrancy guard in storage", () => {
    expect(
      calculatePreVerificationGas(operation(), standard, "0.7") -
        calculatePreVerificationGas(operation(), standard, "0.8"),
    ).toBe(2_150n);
  });

  it("shares the transaction's 21,000 gas and the bundle's fixed overheads among expectedBundleSize operations", () => {
    const config = { ...defaultPreVerificationGasConfig, expectedBundleSize: 2 };
    const alone = calculatePreVerificationGas(operation(), standard, "0.8");
    const shared = calculatePreVerificationGas(operation(), standard, "0.8", config);
    expect(alone - shared).toBe((21_000n + 9_830n + 200n) / 2n);
  });
});
