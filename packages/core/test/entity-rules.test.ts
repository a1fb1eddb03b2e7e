import { type EntryPointVersion, ruleProbeAbis } from "@bundlekit/devnet";
import { type Address, concat, getAddress, type Hex, parseAbi, parseEther, sliceHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { UserOperation } from "../src/userop/types.ts";
import type { engineFixture } from "./fixtures.ts";
import { eip7702Operation, rejection } from "./fixtures.ts";
import { ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562's rules on entities beyond their own validation, on a real anvil: one address in two
 * roles (STO-040, both ways), the allowance of an unstaked factory or paymaster (UREP-020), who
 * answers for another entity's failure (EREP-020, EREP-030), a paymaster's context (EREP-050), and
 * EIP-7702 accounts in other roles than the sender (AUTH-020, AUTH-040).
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
const freshBundler = async () => (await fixture.makeBundler({ settings: { reputation: { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 } } })).bundler;

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

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("one address in two roles (STO-040) on EntryPoint v%s", (version) => {
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

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("the allowance of an unstaked factory or paymaster (UREP-020) on EntryPoint v%s", (version) => {
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

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("who answers for another entity's failure (EREP-020, EREP-030) on EntryPoint v%s", (version) => {
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

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("EIP-7702 accounts as other entities (AUTH-020) on EntryPoint v%s", (version) => {
  /** A fresh address whose code delegates to `implementation` (EIP-7702), as an EOA's does once it signed an authorization. */
  async function delegatedTo(implementation: Address) {
    const eoa = privateKeyToAccount(generatePrivateKey()).address;
    await fixture.client.request({ method: "anvil_setCode", params: [eoa, concat(["0xef0100", implementation])] } as never);
    return eoa;
  }

  it("refuses an EIP-7702 account as the paymaster, and admits the contract it delegates to", async () => {
    const bundler = await freshBundler();
    const { op, set } = await probes.ruleOp(version, { paymasterRule: "OK" });
    const delegated = await delegatedTo(set.paymaster);
    const error = await expectRefused(
      bundler.sendUserOperation(sponsoredBy(version, op, delegated), set.entryPoint),
      RpcErrorCode.opcodeOrStorageRule,
      new RegExp(`^paymaster ${getAddress(delegated)} is an EIP-7702 account \\(delegating to ${getAddress(set.paymaster)}\\), which may only be a sender \\(AUTH-020\\)`),
    );
    expect(error.data).toMatchObject({ rule: "AUTH-020", paymaster: getAddress(delegated) });
    await expect(bundler.sendUserOperation(op, set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await bundler.stop();
  });

  it("refuses an EIP-7702 account as the factory, and admits the contract it delegates to", async () => {
    const bundler = await freshBundler();
    const { op, set } = await probes.ruleOp(version, { factoryRule: "OK" });
    const delegated = await delegatedTo(set.factory);
    const viaDelegated: UserOperation =
      version === "0.6" ? ({ ...op, initCode: concat([delegated, sliceHex((op as { initCode: Hex }).initCode, 20)]) } as UserOperation) : ({ ...op, factory: delegated } as UserOperation);
    await expectRefused(
      bundler.sendUserOperation(viaDelegated, set.entryPoint),
      RpcErrorCode.opcodeOrStorageRule,
      new RegExp(`^factory ${getAddress(delegated)} is an EIP-7702 account .*\\(AUTH-020\\)`),
    );
    await expect(bundler.sendUserOperation(op, set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await bundler.stop();
  });
});

describe("one delegate per sender in the pool (AUTH-040) on EntryPoint v0.8, the version that deploys EIP-7702 accounts", () => {
  it("refuses a second operation whose authorization delegates elsewhere, and admits one that delegates to the same account code", async () => {
    const bundler = await freshBundler();
    const deployment = fixture.devnet.deployments["0.8"];
    const eoa = privateKeyToAccount(generatePrivateKey());
    await fixture.client.waitForTransactionReceipt({ hash: await probes.deployer.sendTransaction({ to: eoa.address, value: parseEther("1") }) });
    const operation = (nonce: bigint, delegate: Address) => eip7702Operation(eoa, { nonce, delegate, entryPoint: deployment.entryPoint, chainId: fixture.devnet.chainId });
    await bundler.sendUserOperation(await operation(0n, deployment.simple7702Account!), deployment.entryPoint);
    const error = await expectRefused(
      bundler.sendUserOperation(await operation(1n, deployment.simpleAccountFactory), deployment.entryPoint),
      RpcErrorCode.opcodeOrStorageRule,
      new RegExp(`^account ${eoa.address} has an operation in the mempool whose authorization delegates to ${getAddress(deployment.simple7702Account!)}, not ${getAddress(deployment.simpleAccountFactory)} \\(AUTH-040\\)`),
    );
    expect(error.data).toMatchObject({ rule: "AUTH-040", account: eoa.address });
    await expect(bundler.sendUserOperation(await operation(1n, deployment.simple7702Account!), deployment.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await bundler.stop();
  });
});

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("a paymaster's context (EREP-050) on EntryPoint v%s", (version) => {
  it("refuses an unstaked paymaster that returns a context, and admits a staked one", async () => {
    const bundler = await freshBundler();
    const unstaked = await probes.ruleOp(version, { paymasterRule: "CONTEXT:32" });
    const error = await expectRefused(
      bundler.sendUserOperation(unstaked.op, unstaked.set.entryPoint),
      RpcErrorCode.opcodeOrStorageRule,
      new RegExp(`^paymaster ${getAddress(unstaked.set.paymaster)} returns a context of 32 bytes but is not staked \\(EREP-050\\)`),
    );
    expect(error.data).toMatchObject({ rule: "EREP-050", paymaster: getAddress(unstaked.set.paymaster) });
    const staked = await probes.ruleOp(version, { paymasterRule: "CONTEXT:32", staked: true });
    await expect(bundler.sendUserOperation(staked.op, staked.set.entryPoint)).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await bundler.stop();
  });
});
