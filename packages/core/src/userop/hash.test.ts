import { type Address, type Hex, toHex } from "viem";
import { getUserOperationHash as viemGetUserOperationHash } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createEntryPointRegistry } from "../entrypoint/registry.ts";
import { seededRandom } from "../simulation/seeded-random.ts";
import { getUserOperationHash } from "./hash.ts";
import type { UserOperation } from "./types.ts";

/** Draws for random operations, from a seed (a failure names the operation that showed it). */
function random(seed: number) {
  const { next, int } = seededRandom(seed);
  const bytes = (length: number): Hex => toHex(Uint8Array.from({ length }, () => int(256)));
  /** A value of 0 to `bits` bits, often at the edges (0, all ones). */
  const uint = (bits: number) => {
    const pick = int(4);
    if (pick === 0) return 0n;
    if (pick === 1) return (1n << BigInt(bits)) - 1n;
    return BigInt(bytes(Math.max(1, int(bits / 8) + 1)));
  };
  return { next, int, bytes, uint, address: () => bytes(20) as Address };
}

const entryPoints = createEntryPointRegistry().all;
const owner = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

/** An operation of `version` with every field drawn at random, some optional parts left out. */
async function randomOperation(r: ReturnType<typeof random>, version: "0.6" | "0.7" | "0.8"): Promise<UserOperation> {
  const common = {
    sender: r.address(),
    nonce: r.uint(256),
    callData: r.bytes(r.int(700)),
    callGasLimit: r.uint(128),
    verificationGasLimit: r.uint(128),
    preVerificationGas: r.uint(256),
    maxFeePerGas: r.uint(128),
    maxPriorityFeePerGas: r.uint(128),
    signature: r.bytes(65),
  };
  if (version === "0.6") {
    // No initCode at the EIP-7702 marker: viem's hash reads the marker on v0.6 too, which its
    // EntryPoint does not (userop.test.ts checks that case against the chain).
    const initCode = r.int(3) === 0 ? "0x" : r.bytes(20 + r.int(200));
    return { ...common, initCode, paymasterAndData: r.int(2) === 0 ? "0x" : r.bytes(20 + r.int(120)) };
  }
  const factory = r.int(3) === 0 ? {} : r.int(4) === 0 && version === "0.8" ? { factory: "0x7702" as Address, factoryData: r.bytes(r.int(40)) } : { factory: r.address(), factoryData: r.bytes(r.int(200)) };
  const paymaster =
    r.int(2) === 0
      ? {}
      : { paymaster: r.address(), paymasterVerificationGasLimit: r.uint(128), paymasterPostOpGasLimit: r.uint(128), ...(r.int(3) === 0 ? {} : { paymasterData: r.bytes(r.int(150)) }) };
  const authorization = "factory" in factory && factory.factory === "0x7702" ? { authorization: { ...(await owner.signAuthorization({ address: r.address(), chainId: 1, nonce: r.int(5) })), yParity: 0 } } : {};
  return { ...common, ...factory, ...paymaster, ...authorization } as UserOperation;
}

describe("getUserOperationHash", () => {
  it("equals viem's on 3,000 random operations of every EntryPoint version, with and without factory, paymaster and EIP-7702", async () => {
    const r = random(7_702);
    for (let i = 0; i < 1_000; i++) {
      for (const entryPoint of entryPoints) {
        const op = await randomOperation(r, entryPoint.version);
        const chainId = [1, 31337, 11155111, 2 ** 31 - 1][r.int(4)]!;
        const expected = viemGetUserOperationHash({ userOperation: op as never, entryPointAddress: entryPoint.address, entryPointVersion: entryPoint.version, chainId });
        expect(getUserOperationHash(op, entryPoint, chainId), `operation ${i} on v${entryPoint.version}`).toBe(expected);
      }
    }
  });
});
