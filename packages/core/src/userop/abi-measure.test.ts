import { type Address, encodeAbiParameters, type Hex, parseAbiParameters, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../simulation/seeded-random.ts";
import { encodedUserOperationSize, userOperationSize } from "../validation/size-limits.ts";
import { measureEncoded, measureUserOperation } from "./abi-measure.ts";
import { toEntryPointStruct } from "./pack.ts";
import { isUserOperationV06, type UserOperation } from "./types.ts";

/** Random fields, often zero-heavy (zero bytes are what the count must get right). */
function random(seed: number) {
  const { int } = seededRandom(seed);
  const byte = () => (int(3) === 0 ? 0 : int(256));
  const bytes = (length: number): Hex => toHex(Uint8Array.from({ length }, byte));
  const uint = (bits: number) =>
    [0n, (1n << BigInt(bits)) - 1n, BigInt(bytes(1 + int(bits / 8)))][int(3)]!;
  return { int, bytes, uint, address: () => bytes(20) as Address };
}

function randomOperation(r: ReturnType<typeof random>, v06: boolean): UserOperation {
  const common = {
    sender: r.address(),
    nonce: r.uint(256),
    callData: r.bytes(r.int(3) === 0 ? 0 : r.int(300)),
    callGasLimit: r.uint(128),
    verificationGasLimit: r.uint(128),
    preVerificationGas: r.uint(256),
    maxFeePerGas: r.uint(128),
    maxPriorityFeePerGas: r.uint(128),
    signature: r.bytes(r.int(4) === 0 ? 0 : 65),
  };
  if (v06)
    return {
      ...common,
      initCode: r.int(2) === 0 ? "0x" : r.bytes(20 + r.int(100)),
      paymasterAndData: r.int(2) === 0 ? "0x" : r.bytes(20 + r.int(64)),
    };
  return {
    ...common,
    ...(r.int(2) === 0 ? {} : { factory: r.address(), factoryData: r.bytes(r.int(100)) }),
    ...(r.int(2) === 0
      ? {}
      : {
          paymaster: r.address(),
          paymasterVerificationGasLimit: r.uint(128),
          paymasterPostOpGasLimit: r.uint(128),
          paymasterData: r.bytes(r.int(64)),
        }),
  } as UserOperation;
}

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

  it("leaves what is not plain (out of range, odd hex, a bad checksum) to the encoder: its answer or its error", () => {
    const op = randomOperation(random(7), false);
    expect(() => measureUserOperation({ ...op, nonce: 1n << 256n })).toThrow(
      /not in safe 256-bit unsigned integer range/,
    );
    // viem takes odd hex, padded: the measure follows it.
    const odd = { ...op, callData: "0x123" } as const;
    expect(measureUserOperation(odd)).toEqual(measureEncoded(encoded(odd, false)));
    expect(() =>
      measureUserOperation({ ...op, sender: "0xAbCdEf0000000000000000000000000000000001" }),
    ).toThrow(/Address .* is invalid/);
  });
});
