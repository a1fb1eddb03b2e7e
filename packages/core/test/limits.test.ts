import type { EntryPointVersion } from "@bundlekit/devnet";
import { type Address, concat, encodeFunctionData, getAddress, type Hash, type Hex, parseEther, size, zeroAddress } from "viem";
import { entryPoint06Abi, entryPoint07Abi, entryPoint08Abi, entryPoint09Abi, toPackedUserOperation } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import type { BundlerSettingsInput } from "../src/engine/settings.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { UserOperation, UserOperationV07 } from "../src/userop/types.ts";
import { rejection } from "./fixtures.ts";
import { ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562's size limits on every EntryPoint version: an operation too large (LIM-010) and a
 * paymaster context too large (LIM-020) are refused at admission, and a bundle never holds more
 * calldata (LIM-040) or paymaster context (LIM-050) than allowed: the rest waits for the next one.
 */
let probes: Awaited<ReturnType<typeof ruleProbesFixture>>;
let bundler: Bundler;
const stakeRequirement = { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 };

beforeAll(async () => {
  probes = await ruleProbesFixture();
  ({ bundler } = await probes.fixture.makeBundler({ settings: { reputation: stakeRequirement } }));
}, 120_000);
afterAll(async () => {
  await bundler?.stop();
  await probes?.fixture.devnet.stop();
});

const abis = { "0.6": entryPoint06Abi, "0.7": entryPoint07Abi, "0.8": entryPoint08Abi, "0.9": entryPoint09Abi } as const;

/** `handleOps(ops, 0x0)` calldata as the EntryPoint's own ABI encodes it. */
function handleOpsCalldata(version: EntryPointVersion, ops: readonly UserOperation[]): Hex {
  const structs = ops.map((op) => (version === "0.6" ? op : toPackedUserOperation(op as never)));
  return encodeFunctionData({ abi: abis[version], functionName: "handleOps", args: [structs, zeroAddress] } as never);
}

/** Bytes of the operation ABI-encoded as its EntryPoint takes it: its share of a one-operation `handleOps` call. */
function encodedSize(version: EntryPointVersion, op: UserOperation): number {
  const selectorHeadLengthAndOffset = 4 + 32 * 4;
  return size(handleOpsCalldata(version, [op])) - selectorHeadLengthAndOffset;
}

/** The operation with zero bytes appended to its callData (ignored by `execute()`) until it is `bytes` long encoded. */
function padTo(version: EntryPointVersion, op: UserOperation, bytes: number): UserOperation {
  const padding = bytes - encodedSize(version, op);
  expect(padding % 32).toBe(0);
  const padded = { ...op, callData: concat([op.callData, `0x${"00".repeat(padding)}`]) };
  expect(encodedSize(version, padded)).toBe(bytes);
  return padded;
}

/** A probe operation whose staked paymaster returns a context of `bytes` zero bytes (with postOp gas to receive it). */
async function withPaymasterContext(version: EntryPointVersion, bytes: number) {
  const { op, set } = await probes.ruleOp(version, { paymasterRule: `CONTEXT:${bytes}`, staked: true });
  const withPostOpGas = version === "0.6" ? op : ({ ...op, paymasterPostOpGasLimit: 50_000n } as UserOperationV07);
  return { op: withPostOpGas, set };
}

/** A bundler that bundles with `config`; stopped by the caller. */
async function bundlerWith(settings: BundlerSettingsInput) {
  return (await probes.fixture.makeBundler({ settings: { ...settings, reputation: { ...stakeRequirement, ...settings.reputation } } })).bundler;
}

/** Bundle until every operation is on chain; the transactions that carried them, with their operations, in order. */
async function bundleAll(engine: Bundler, hashes: readonly Hash[]) {
  await engine.sendBundleNow();
  const byTransaction = new Map<Hash, Hash[]>();
  for (const hash of hashes) {
    const receipt = await engine.getUserOperationReceipt(hash);
    expect(receipt, `receipt of ${hash}`).toMatchObject({ success: true });
    const transactionHash = receipt!.receipt.transactionHash;
    byTransaction.set(transactionHash, [...(byTransaction.get(transactionHash) ?? []), hash]);
  }
  const transactions = await Promise.all(
    [...byTransaction.keys()].map(async (hash) => ({ ...(await probes.fixture.client.getTransactionReceipt({ hash })), input: (await probes.fixture.client.getTransaction({ hash })).input })),
  );
  transactions.sort((a, b) => Number(a.blockNumber - b.blockNumber) || a.transactionIndex - b.transactionIndex);
  return transactions.map((t) => ({ calldataSize: size(t.input), operations: byTransaction.get(t.transactionHash)! }));
}

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("ERC-7562 size limits on EntryPoint v%s", (version) => {
  /** Operations of fresh probe accounts, made one after another (their deployments share a deployer's nonce). */
  async function probeOperations(count: number) {
    const made = [];
    for (let i = 0; i < count; i++) made.push(await probes.ruleOp(version, {}));
    return made;
  }

  describe("LIM-010: an operation is at most 8192 bytes ABI-encoded", () => {
    it("refuses an operation of 8224 bytes with -32602 naming the size, the limit and the rule, before simulating it", async () => {
      // Its account would break OP-011 when simulated: the size is refused first.
      const { op, set } = await probes.ruleOp(version, { accountRule: "TIMESTAMP" });
      const error = await rejection(bundler.sendUserOperation(padTo(version, op, 8224), set.entryPoint));
      expect(error.code, error.message).toBe(RpcErrorCode.invalidParams);
      expect(error.message).toMatch(/\b8224 bytes\b.*\b8192 bytes\b.*\(LIM-010\)/);
    });

    it("refuses to estimate an operation of 8224 bytes, which it could not admit", async () => {
      const { op, set } = await probes.ruleOp(version, {});
      const error = await rejection(bundler.estimateUserOperationGas(padTo(version, op, 8224), set.entryPoint));
      expect(error.code, error.message).toBe(RpcErrorCode.invalidParams);
      expect(error.message).toMatch(/\b8224 bytes\b.*\b8192 bytes\b.*\(LIM-010\)/);
    });

    it("admits an operation of exactly 8192 bytes", async () => {
      const { op, set } = await probes.ruleOp(version, {});
      await expect(bundler.sendUserOperation(padTo(version, op, 8192), set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    });
  });

  describe("LIM-020: a paymaster's context is at most 2048 bytes", () => {
    it("refuses a staked paymaster returning 2049 bytes with -32502 naming the paymaster and the rule", async () => {
      const { op, set } = await withPaymasterContext(version, 2049);
      const error = await rejection(bundler.sendUserOperation(op, set.entryPoint));
      expect(error.code, error.message).toBe(RpcErrorCode.opcodeOrStorageRule);
      const paymaster = getAddress(set.paymaster);
      expect(error.message).toBe(`paymaster ${paymaster} returns a context of 2049 bytes, above 2048 (LIM-020)`);
      expect(error.data).toMatchObject({ rule: "LIM-020", paymaster });
    });

    it("admits a staked paymaster returning 2048 bytes", async () => {
      const { op, set } = await withPaymasterContext(version, 2048);
      await expect(bundler.sendUserOperation(op, set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    });
  });

  describe("LIM-040: a bundle holds at most maxBundleCalldataSize bytes of handleOps calldata", () => {
    it("bundles the operations that fit and the rest in the next bundle", async () => {
      const made = await probeOperations(3);
      const ops = made.map(({ op }) => padTo(version, op, 2048));
      // Room for two of the three operations, not a byte more.
      const maxBundleCalldataSize = size(handleOpsCalldata(version, ops.slice(0, 2)));
      expect(size(handleOpsCalldata(version, ops))).toBeGreaterThan(maxBundleCalldataSize);
      const engine = await bundlerWith({ validation: { maxUserOperationBytes: 2048 }, bundling: { maxCalldataBytes: maxBundleCalldataSize } });
      try {
        const hashes: Hash[] = [];
        for (const op of ops) hashes.push(await engine.sendUserOperation(op, made[0]!.set.entryPoint));
        const bundles = await bundleAll(engine, hashes);
        expect(bundles.map((b) => b.operations.length)).toEqual([2, 1]);
        for (const bundle of bundles) expect(bundle.calldataSize).toBeLessThanOrEqual(maxBundleCalldataSize);
      } finally {
        await engine.stop();
      }
    });

    it("bundles every operation at once when the calldata fits", async () => {
      const made = await probeOperations(3);
      const ops = made.map(({ op }) => padTo(version, op, 2048));
      const maxBundleCalldataSize = size(handleOpsCalldata(version, ops));
      const engine = await bundlerWith({ validation: { maxUserOperationBytes: 2048 }, bundling: { maxCalldataBytes: maxBundleCalldataSize } });
      try {
        const hashes: Hash[] = [];
        for (const op of ops) hashes.push(await engine.sendUserOperation(op, made[0]!.set.entryPoint));
        const bundles = await bundleAll(engine, hashes);
        expect(bundles.map((b) => b.operations.length)).toEqual([3]);
        expect(bundles[0]!.calldataSize).toBe(maxBundleCalldataSize);
      } finally {
        await engine.stop();
      }
    });
  });

  describe("LIM-050: a bundle holds at most maxBundleContextSize bytes of paymaster context", () => {
    async function contextOperations(engine: Bundler, count: number) {
      const hashes: Hash[] = [];
      let entryPoint: Address | undefined;
      for (let i = 0; i < count; i++) {
        const { op, set } = await withPaymasterContext(version, 2048);
        entryPoint = set.entryPoint;
        hashes.push(await engine.sendUserOperation(op, entryPoint));
      }
      return hashes;
    }

    it("bundles the operations whose contexts fit and the rest in the next bundle", async () => {
      const engine = await bundlerWith({ bundling: { maxContextBytes: 4096 } });
      try {
        const bundles = await bundleAll(engine, await contextOperations(engine, 3));
        expect(bundles.map((b) => b.operations.length)).toEqual([2, 1]);
      } finally {
        await engine.stop();
      }
    });

    it("bundles every operation at once when their contexts fit", async () => {
      const engine = await bundlerWith({ bundling: { maxContextBytes: 6144 } });
      try {
        const bundles = await bundleAll(engine, await contextOperations(engine, 3));
        expect(bundles.map((b) => b.operations.length)).toEqual([3]);
      } finally {
        await engine.stop();
      }
    });
  });
});
