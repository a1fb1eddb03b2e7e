import { type Address, type Hex, toHex } from "viem";
import { getUserOperationHash as viemGetUserOperationHash } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { outcome } from "../../test/outcome.ts";
import { createEntryPointRegistry } from "../entrypoint/registry.ts";
import type { EntryPointVersion } from "../entrypoint/version.ts";
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
async function randomOperation(r: ReturnType<typeof random>, version: EntryPointVersion): Promise<UserOperation> {
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
  const factory = r.int(3) === 0 ? {} : r.int(4) === 0 && version !== "0.7" ? { factory: "0x7702" as Address, factoryData: r.bytes(r.int(40)) } : { factory: r.address(), factoryData: r.bytes(r.int(200)) };
  const paymaster =
    r.int(2) === 0
      ? {}
      : {
          paymaster: r.address(),
          paymasterVerificationGasLimit: r.uint(128),
          paymasterPostOpGasLimit: r.uint(128),
          ...(r.int(3) === 0 ? {} : { paymasterData: r.bytes(r.int(150)) }),
          ...(version === "0.9" && r.int(2) === 0 ? { paymasterSignature: r.bytes(1 + r.int(100)) } : {}),
        };
  const authorization = "factory" in factory && factory.factory === "0x7702" ? { authorization: { ...(await owner.signAuthorization({ address: r.address(), chainId: 1, nonce: r.int(5) })), yParity: 0 } } : {};
  return { ...common, ...factory, ...paymaster, ...authorization } as UserOperation;
}

describe("getUserOperationHash", () => {
  it("equals viem's on 4,000 random operations of every EntryPoint version, with and without factory, paymaster, EIP-7702 and v0.9's paymaster signature", async () => {
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

/** A v0.7+ operation with every value plain. */
const plain = {
  sender: "0x1111111111111111111111111111111111111111",
  nonce: 3n,
  callData: "0x1234",
  callGasLimit: 50_000n,
  verificationGasLimit: 90_000n,
  preVerificationGas: 48_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  signature: "0x",
} as const satisfies UserOperation;

describe("getUserOperationHash beyond its fields' ranges", () => {
  it("answers as viem's does for a limit past its 16 bytes, a nonce past its word, and a sender not plainly an address", () => {
    for (const entryPoint of entryPoints.filter((e) => e.version !== "0.6")) {
      for (const op of [{ ...plain, callGasLimit: 1n << 128n }, { ...plain, nonce: 1n << 256n }, { ...plain, sender: "0x11" as const }]) {
        expect(outcome(() => getUserOperationHash(op, entryPoint, 1)), `v${entryPoint.version}`).toBe(
          outcome(() => viemGetUserOperationHash({ userOperation: op as never, entryPointAddress: entryPoint.address, entryPointVersion: entryPoint.version, chainId: 1 })),
        );
      }
    }
  });
});

describe("getUserOperationHash on v0.9", () => {
  const v09 = entryPoints.find((e) => e.version === "0.9")!;
  const op = {
    ...plain,
    signature: `0x${"1c".repeat(65)}`,
    paymaster: "0x2222222222222222222222222222222222222222",
    paymasterVerificationGasLimit: 30_000n,
    paymasterPostOpGasLimit: 0n,
    paymasterData: "0xabcdef",
  } as const satisfies UserOperation;

  it("leaves the paymaster signature out, so the paymaster may sign after the account", () => {
    const one = getUserOperationHash({ ...op, paymasterSignature: `0x${"aa".repeat(65)}` }, v09, 1);
    const other = getUserOperationHash({ ...op, paymasterSignature: `0x${"bb".repeat(20)}` }, v09, 1);
    expect(one).toBe(other);
    expect(one).not.toBe(getUserOperationHash(op, v09, 1));
  });

  it("is the same whether the signature comes as paymasterSignature or already appended to paymasterData, as the EntryPoint reads both", () => {
    const signature = `0x${"aa".repeat(65)}` as const;
    const appended = `${op.paymasterData}${signature.slice(2)}0041${"22e325a297439656"}` as Hex;
    expect(getUserOperationHash({ ...op, paymasterData: appended }, v09, 1)).toBe(getUserOperationHash({ ...op, paymasterSignature: signature }, v09, 1));
    const eip7702 = { ...op, factory: "0x7702" as Address, factoryData: "0x" as Hex, authorization: { address: op.sender, chainId: 1, nonce: 0, r: `0x${"01".repeat(32)}` as Hex, s: `0x${"02".repeat(32)}` as Hex, yParity: 0 } };
    expect(getUserOperationHash({ ...eip7702, paymasterData: appended }, v09, 1)).toBe(getUserOperationHash({ ...eip7702, paymasterSignature: signature }, v09, 1));
  });
});
