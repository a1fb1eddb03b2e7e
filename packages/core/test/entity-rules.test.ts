import { type EntryPointVersion, ruleProbeAbis } from "@bundlekit/devnet";
import { type Address, getAddress, parseAbi, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcErrorCode } from "../src/errors/errors.ts";
import type { UserOperation } from "../src/userop/types.ts";
import type { engineFixture } from "./fixtures.ts";
import { rejection } from "./fixtures.ts";
import { ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562's rules on entities beyond their own validation, on a real anvil: one address in two
 * roles (STO-040, both ways), the allowance of an unstaked factory or paymaster (UREP-020), and
 * who answers for another entity's failure (EREP-020, EREP-030).
 */
let fixture: Awaited<ReturnType<typeof engineFixture>>;
let probes: Awaited<ReturnType<typeof ruleProbesFixture>>;

beforeAll(async () => {
  probes = await ruleProbesFixture();
  fixture = probes.fixture;
}, 60_000);
afterAll(async () => {
  await fixture?.devnet.stop();
});

const depositToAbi = parseAbi(["function depositTo(address account) payable"]);

/** A fresh bundler in safe mode where a 1 ETH stake with a 10 s delay counts as staked. */
const freshBundler = async () => (await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } })).bundler;

/** `op` paid for by `paymaster` instead of its account (a paymaster that needs no data). */
function sponsoredBy(version: EntryPointVersion, op: UserOperation, paymaster: Address): UserOperation {
  if (version === "0.6") return { ...op, paymasterAndData: paymaster } as UserOperation;
  return { ...op, paymaster, paymasterVerificationGasLimit: 100_000n, paymasterPostOpGasLimit: 0n, paymasterData: "0x" } as UserOperation;
}

/** A deployed RuleAccount that is also a paymaster, with a deposit at the EntryPoint to sponsor others. */
async function accountAndPaymaster(version: EntryPointVersion) {
  const { op, set, sender } = await probes.ruleOp(version, {});
  await fixture.client.waitForTransactionReceipt({
    hash: await probes.deployer.writeContract({ address: set.entryPoint, abi: depositToAbi, functionName: "depositTo", args: [sender], value: parseEther("1") }),
  });
  return { op, entryPoint: set.entryPoint, address: sender };
}

async function expectRefused(sent: Promise<unknown>, code: RpcErrorCode, message: RegExp) {
  const error = await rejection(sent);
  expect(error.code, error.message).toBe(code);
  expect(error.message).toMatch(message);
  return error;
}

describe.each(["0.6", "0.7", "0.8"] as const)("one address in two roles (STO-040) on EntryPoint v%s", (version) => {
  it("refuses a paymaster that is the sender of a pooled operation, and admits it once that operation is included", async () => {
    const bundler = await freshBundler();
    const both = await accountAndPaymaster(version);
    const other = await probes.ruleOp(version, {});
    const sponsored = sponsoredBy(version, other.op, both.address);

    await bundler.sendUserOperation(both.op, both.entryPoint);
    const error = await expectRefused(
      bundler.sendUserOperation(sponsored, both.entryPoint),
      RpcErrorCode.opcodeOrStorageRule,
      new RegExp(`^paymaster ${getAddress(both.address)} is the sender of another operation in the mempool \\(STO-040\\)`),
    );
    expect(error.data).toMatchObject({ rule: "STO-040", paymaster: getAddress(both.address) });

    await bundler.sendBundleNow();
    await expect(bundler.sendUserOperation(sponsored, both.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await bundler.stop();
  });

  it("refuses a sender that is the paymaster of a pooled operation, and admits it once that operation is included", async () => {
    const bundler = await freshBundler();
    const both = await accountAndPaymaster(version);
    const other = await probes.ruleOp(version, {});

    await bundler.sendUserOperation(sponsoredBy(version, other.op, both.address), both.entryPoint);
    const error = await expectRefused(
      bundler.sendUserOperation(both.op, both.entryPoint),
      RpcErrorCode.opcodeOrStorageRule,
      new RegExp(`^account ${getAddress(both.address)} is the paymaster of another operation in the mempool \\(STO-040\\)`),
    );
    expect(error.data).toMatchObject({ rule: "STO-040", account: getAddress(both.address) });

    await bundler.sendBundleNow();
    await expect(bundler.sendUserOperation(both.op, both.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await bundler.stop();
  });
});

describe.each(["0.6", "0.7", "0.8"] as const)("the allowance of an unstaked factory or paymaster (UREP-020) on EntryPoint v%s", (version) => {
  /** `count` operations of fresh accounts that each name the factory (deploying) or the paymaster of the `staked` or unstaked probes. */
  async function operationsNaming(entity: "factory" | "paymaster", count: number, staked: boolean) {
    const ops = [];
    // One after another: each funds or deploys its account from the same wallet.
    for (let i = 0; i < count; i++) ops.push(await probes.ruleOp(version, entity === "factory" ? { factoryRule: "OK", staked } : { paymasterRule: "OK", staked }));
    return ops;
  }

  for (const entity of ["factory", "paymaster"] as const) {
    it(`admits 10 operations naming a new unstaked ${entity}, refuses the 11th with -32504, and allows more as they are included`, async () => {
      const bundler = await freshBundler();
      const ops = await operationsNaming(entity, 12, false);
      for (const { op, set } of ops.slice(0, 10)) await bundler.sendUserOperation(op, set.entryPoint);
      const { op: eleventh, set } = ops[10]!;
      const address = getAddress(set[entity]);
      const error = await expectRefused(
        bundler.sendUserOperation(eleventh, set.entryPoint),
        RpcErrorCode.throttledOrBanned,
        new RegExp(`^unstaked ${entity} ${address} already has 10 operations in the mempool, .*\\(UREP-020\\)`),
      );
      expect(error.data).toMatchObject({ [entity]: address, limit: 10, rule: "UREP-020" });

      // Ten seen, ten included: the allowance becomes 10 + 1 × 10, and the pool is empty.
      await bundler.sendBundleNow();
      for (const { op } of ops.slice(10)) await expect(bundler.sendUserOperation(op, set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
      await bundler.stop();
    });

    it(`admits an 11th operation naming a staked ${entity}`, async () => {
      const bundler = await freshBundler();
      for (const { op, set } of await operationsNaming(entity, 11, true)) {
        await expect(bundler.sendUserOperation(op, set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
      }
      await bundler.stop();
    });
  }
});

describe.each(["0.6", "0.7", "0.8"] as const)("who answers for another entity's failure (EREP-020, EREP-030) on EntryPoint v%s", (version) => {
  const reputationOf = async (bundler: Awaited<ReturnType<typeof freshBundler>>, entryPoint: Address, address: Address) =>
    (await bundler.dumpReputation(entryPoint)).find((e) => e.address === getAddress(address)) ?? { opsSeen: 0, status: "ok" };

  for (const staked of [true, false]) {
    it(`${staked ? "bans the staked factory" : "spares the unstaked factory"} when the account it deploys fails its bundle (AA21)`, async () => {
      const bundler = await freshBundler();
      const { op, set, sender } = await probes.ruleOp(version, { factoryRule: "OK", staked });
      await bundler.sendUserOperation(op, set.entryPoint);
      await fixture.client.request({ method: "anvil_setBalance", params: [sender, "0x0"] } as never);
      expect(await bundler.sendBundleNow()).toEqual([]);
      expect(await reputationOf(bundler, set.entryPoint, set.factory)).toMatchObject(staked ? { opsSeen: 10_000, status: "banned" } : { opsSeen: 0, status: "ok" });
      await bundler.stop();
    });
  }

  for (const accountStaked of [true, false]) {
    it(`${accountStaked ? "bans the staked account, not" : "bans"} its staked paymaster when the paymaster fails the bundle (AA33)`, async () => {
      const bundler = await freshBundler();
      const { op, set, sender } = await probes.ruleOp(version, { paymasterRule: "REVERT_IF_SHARED", staked: true });
      if (accountStaked) await set.stake(sender, 10);
      await bundler.sendUserOperation(op, set.entryPoint);
      const setShared = async (value: bigint) =>
        fixture.client.waitForTransactionReceipt({
          hash: await probes.deployer.writeContract({ address: set.target, abi: ruleProbeAbis.RuleTarget, functionName: "setShared", args: [value] }),
        });
      await setShared(1n);
      try {
        expect(await bundler.sendBundleNow()).toEqual([]);
        const [account, paymaster] = [await reputationOf(bundler, set.entryPoint, sender), await reputationOf(bundler, set.entryPoint, set.paymaster)];
        expect(account).toMatchObject(accountStaked ? { opsSeen: 10_000, status: "banned" } : { opsSeen: 0, status: "ok" });
        expect(paymaster).toMatchObject(accountStaked ? { opsSeen: 0, status: "ok" } : { opsSeen: 10_000, status: "banned" });
      } finally {
        await setShared(0n);
        await bundler.stop();
      }
    });
  }
});
