import { encodeAbiParameters, type Hex, parseAbiParameters } from "viem";
import { describe, expect, it } from "vitest";
import { randomDraws as random, randomOperation } from "../../test/random-operations.ts";
import { encodedUserOperationSize, userOperationSize } from "../validation/size-limits.ts";
import { evenHexZeros, measureEncoded, measureUserOperation } from "./abi-measure.ts";
import { toEntryPointStruct } from "./pack.ts";
import { isUserOperationV06, type UserOperation } from "./types.ts";

/** Any leading 32-byte word (the PVG calculation puts the struct's type hash there), zero bytes included. */
const typeHash = "0x29a0bca4af4be3421398da0000000000d7de38cb492214754cb6a47507dd6f00";

/** The operation's fields encoded by viem, written out independently of the measuring code. */
function encoded(op: UserOperation, withTypeHash: boolean): Hex {
  if (isUserOperationV06(op)) {
    return encodeAbiParameters(
      parseAbiParameters(
        "address, uint256, bytes, bytes, uint256, uint256, uint256, uint256, uint256, bytes, bytes",
      ),
      [
        op.sender,
        op.nonce,
        op.initCode,
        op.callData,
        op.callGasLimit,
        op.verificationGasLimit,
        op.preVerificationGas,
        op.maxFeePerGas,
        op.maxPriorityFeePerGas,
        op.paymasterAndData,
        op.signature,
      ],
    );
  }
  const p = toEntryPointStruct(op);
  const fields = [
    p.sender,
    p.nonce,
    p.initCode,
    p.callData,
    p.accountGasLimits,
    p.preVerificationGas,
    p.gasFees,
    p.paymasterAndData,
    p.signature,
  ] as const;
  return withTypeHash
    ? encodeAbiParameters(
        parseAbiParameters(
          "bytes32, address, uint256, bytes, bytes, bytes32, uint256, bytes32, bytes, bytes",
        ),
        [typeHash, ...fields],
      )
    : encodeAbiParameters(
        parseAbiParameters(
          "address, uint256, bytes, bytes, bytes32, uint256, bytes32, bytes, bytes",
        ),
        fields,
      );
}

describe("measureUserOperation", () => {
  it("counts the bytes and zero bytes viem's encoding has, for 2,000 random operations of both layouts", () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const op = randomOperation(random(seed), seed % 2 === 0);
      const withTypeHash = !isUserOperationV06(op) && seed % 3 === 0;
      expect(measureUserOperation(op, withTypeHash ? typeHash : undefined), `seed ${seed}`).toEqual(
        measureEncoded(encoded(op, withTypeHash)),
      );
      expect(userOperationSize(op), `seed ${seed}`).toBe(encodedUserOperationSize(op));
    }
  });

  it("measures an operation changed in place afresh, not as it was measured before", () => {
    for (const v06 of [true, false]) {
      const op = randomOperation(random(v06 ? 3 : 4), v06);
      const before = measureUserOperation(op);
      op.signature = `0x${"00".repeat(200)}`;
      op.nonce = op.nonce === 5n ? 6n : 5n;
      expect(measureUserOperation(op)).not.toEqual(before);
      expect(measureUserOperation(op)).toEqual(measureEncoded(encoded(op, false)));
      expect(userOperationSize(op)).toBe(encodedUserOperationSize(op));
    }
  });

  it("leaves what is not plain (out of range, odd hex, a bad checksum) to the encoder: its answer or its error", () => {
    const op = randomOperation(random(7), false);
    expect(() => measureUserOperation({ ...op, nonce: 1n << 256n })).toThrow(
      /not in safe 256-bit unsigned integer range/,
    );
    // viem takes odd hex, padded: the measure follows it.
    const odd = { ...op, callData: "0x123" } as const;
    expect(measureUserOperation(odd)).toEqual(measureEncoded(encoded(odd, false)));
    expect(userOperationSize(odd)).toBe(encodedUserOperationSize(odd));
    expect(() =>
      measureUserOperation({ ...op, sender: "0xAbCdEf0000000000000000000000000000000001" }),
    ).toThrow(/Address .* is invalid/);
  });
});

describe("evenHexZeros", () => {
  it("counts whole zero bytes, not zero digits across two bytes, in either letter case", () => {
    expect(evenHexZeros("0x")).toBe(0);
    expect(evenHexZeros("0x00")).toBe(1);
    expect(evenHexZeros("0x000000")).toBe(3);
    expect(evenHexZeros("0x1001")).toBe(0);
    expect(evenHexZeros("0x100001")).toBe(1);
    expect(evenHexZeros("0xAB00cd00")).toBe(2);
  });

  it("refuses what is not 0x and whole bytes of hex digits: -1", () => {
    for (const hex of ["0x0", "0x123", "00", "0X00", "0xg0", "0x0g", "0x00 ", " 0x00", "0x\u00e000"]) expect(evenHexZeros(hex), hex).toBe(-1);
  });
});
