import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { UserOperation, UserOperationV06, UserOperationV07 } from "./types.ts";
import {
  calculatePreVerificationGas,
  defaultPreVerificationGasConfig,
} from "./pre-verification-gas.ts";

/**
 * Each term of preVerificationGas, seen as the difference it makes between two operations that
 * differ only in it. Below the EIP-7623 floor ("standard"): 16 gas per non-zero byte, 4 per zero
 * byte, overheads, and execution counted in and taken out again. Above it ("floor"): 10 gas per
 * token (4 tokens a non-zero byte, 1 a zero byte), less the execution the transaction pays anyway.
 */
const callData = `0xb61d27f6${"ab".repeat(32)}` as Hex; // execute(…): 36 bytes
const largeCallData = `0xb61d27f6${"ab".repeat(4096)}` as Hex; // 4 KiB: past the floor
const small: UserOperationV07 = {
  sender: "0x1111111111111111111111111111111111111111",
  nonce: 0n,
  callData,
  callGasLimit: 100_000n,
  verificationGasLimit: 100_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  signature: `0x${"5c".repeat(65)}`,
};
const large: UserOperationV07 = { ...small, callData: largeCallData };
const smallV06: UserOperationV06 = { ...small, initCode: "0x", paymasterAndData: "0x" };
const sponsoredBy = (op: UserOperationV07, postOp: bigint): UserOperationV07 => ({
  ...op,
  paymaster: "0x3333333333333333333333333333333333333333",
  paymasterVerificationGasLimit: 70_000n,
  paymasterPostOpGasLimit: postOp,
  paymasterData: "0x",
});
const pvg = (
  op: UserOperation,
  verificationGasUsed = 0n,
  config = defaultPreVerificationGasConfig,
) => calculatePreVerificationGas(op, verificationGasUsed, "0.8", config);
/** pvg(b) − pvg(a). */
const difference = (a: UserOperation, b: UserOperation) => pvg(b) - pvg(a);
const withWord = <T extends UserOperation>(op: T): T => ({
  ...op,
  callData: `${op.callData}${"cd".repeat(32)}` as Hex,
});
const zeroSignature = `0x${"00".repeat(65)}` as Hex;

describe("preVerificationGas below the EIP-7623 floor", () => {
  it("charges 16 gas a non-zero byte and 4 a zero byte: a zero signature of 65 bytes costs 65 × 12 less", () => {
    expect(difference(small, { ...small, signature: zeroSignature })).toBe(-780n);
    expect(difference(smallV06, { ...smallV06, signature: zeroSignature })).toBe(-780n);
  });

  it("charges a word of non-zero callData 32 × 16, plus 9.5 per callData word (rounded)", () => {
    expect(difference(smallV06, withWord(smallV06))).toBe(522n);
  });

  it("does not depend on execution: the call limit and the verification gas used are counted in, then taken out", () => {
    // 100,000 and 200,000 have as many non-zero bytes, so the encoded operation costs the same.
    expect(difference(small, { ...small, callGasLimit: 200_000n })).toBe(0n);
    expect(pvg(small, 1_000n) - pvg(small)).toBe(0n);
    expect(difference(sponsoredBy(small, 50_000n), sponsoredBy(small, 60_000n))).toBe(0n);
  });

  it("shares the transaction's 21,000, the fixed 9,830 and v0.8's own 200 among the expected bundle size", () => {
    const inPairs = { ...defaultPreVerificationGasConfig, expectedBundleSize: 2 };
    expect(pvg(small, 0n, inPairs) - pvg(small)).toBe(-15_515n);
  });

  it("adds 25,000 for an EIP-7702 authorization", () => {
    const authorization = {
      address: small.sender,
      chainId: 1,
      nonce: 0,
      r: "0x01",
      s: "0x01",
      yParity: 0,
    } as const;
    expect(difference(small, { ...small, authorization })).toBe(25_000n);
  });

  it("charges executeUserOp calls 1,610 and 8.2 per word of the whole operation instead of 9.5 per callData word", () => {
    // 19 words encoded: 1,610 + 8.2 × 19 − 9.5 × 2 = 1,746.8, rounded.
    expect(difference(small, { ...small, callData: `0x8dd7712f${callData.slice(10)}` })).toBe(
      1_747n,
    );
  });
});

describe("preVerificationGas at the EIP-7623 floor (large calldata, little execution)", () => {
  it("charges 10 gas a token: a word of non-zero callData costs 32 × 4 × 10", () => {
    expect(difference(large, withWord(large))).toBe(1_280n);
  });

  it("a zero signature of 65 bytes costs 65 × 3 tokens less", () => {
    expect(difference(large, { ...large, signature: zeroSignature })).toBe(-1_950n);
  });

  it("is lower by the execution the transaction pays anyway: a tenth of the call and post-op limits, and the verification gas used", () => {
    expect(difference(large, { ...large, callGasLimit: 200_000n })).toBe(-10_000n);
    expect(pvg(large, 1_000n) - pvg(large)).toBe(-1_000n);
    expect(difference(sponsoredBy(large, 50_000n), sponsoredBy(large, 60_000n))).toBe(-1_000n);
  });

  it("v0.6 likewise, with no post-op limit of its own", () => {
    const largeV06 = { ...smallV06, callData: largeCallData };
    expect(difference(largeV06, { ...largeV06, callGasLimit: 200_000n })).toBe(-10_000n);
  });
});
