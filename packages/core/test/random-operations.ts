import { type Address, type Hex, toHex } from "viem";
import { seededRandom } from "../src/simulation/seeded-random.ts";
import type { UserOperation } from "../src/userop/types.ts";

/** Seeded draws for random operations, often zero-heavy and at the edges (a failure names the seed that showed it). */
export function randomDraws(seed: number) {
  const { int } = seededRandom(seed);
  const byte = () => (int(3) === 0 ? 0 : int(256));
  const bytes = (length: number): Hex => toHex(Uint8Array.from({ length }, byte));
  /** 0, all ones, or a value of up to `bits` bits. */
  const uint = (bits: number) =>
    [0n, (1n << BigInt(bits)) - 1n, BigInt(bytes(1 + int(bits / 8)))][int(3)]!;
  return { int, bytes, uint, address: () => bytes(20) as Address };
}

/** A v0.6 operation (`v06`) or a v0.7+ one, every field drawn, factory and paymaster parts sometimes left out. */
export function randomOperation(r: ReturnType<typeof randomDraws>, v06: boolean): UserOperation {
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
  if (v06) {
    return {
      ...common,
      initCode: r.int(2) === 0 ? "0x" : r.bytes(20 + r.int(100)),
      paymasterAndData: r.int(2) === 0 ? "0x" : r.bytes(20 + r.int(64)),
    };
  }
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
