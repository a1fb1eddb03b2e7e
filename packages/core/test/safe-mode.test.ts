import { deployRuleProbes, type EntryPointVersion, type RuleProbes, ruleProbeAbis } from "@bundlekit/devnet";
import { type Address, concat, createWalletClient, encodeFunctionData, getAddress, http, parseAbi, parseEther, parseGwei, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { RpcErrorCode } from "../src/errors/errors.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { engineFixture, rejection } from "./fixtures.ts";

/** ERC-7562 in safe mode, the default, on a real anvil: purpose-built entities run one rule each during validation. */

let fixture: Awaited<ReturnType<typeof engineFixture>>;
let bundler: Bundler;
const probes = {} as Record<EntryPointVersion, { unstaked: RuleProbes; staked: RuleProbes }>;
let salt = 1n;
let deployer: ReturnType<typeof createWalletClient<ReturnType<typeof http>, typeof fixture.devnet.chain, ReturnType<typeof privateKeyToAccount>>>;

beforeAll(async () => {
  fixture = await engineFixture();
  const wallet = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-2)!) });
  deployer = wallet;
  for (const version of ["0.6", "0.7", "0.8"] as const) {
    const unstaked = await deployRuleProbes(fixture.client, wallet, version);
    const staked = await deployRuleProbes(fixture.client, wallet, version);
    await staked.stake(staked.factory, 10);
    await staked.stake(staked.paymaster, 10);
    probes[version] = { unstaked, staked };
  }
  ({ bundler } = await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } }));
}, 60_000);
afterAll(async () => {
  await bundler?.stop();
  await fixture?.devnet.stop();
});

interface RuleOp {
  accountRule?: string;
  /** Deploy the account in the operation, running this rule in the factory. */
  factoryRule?: string;
  paymasterRule?: string;
  staked?: boolean;
}

/** An operation of a fresh RuleAccount (deployed beforehand unless `factoryRule` is given), funded. */
async function ruleOp(version: EntryPointVersion, { accountRule = "OK", factoryRule, paymasterRule, staked = false }: RuleOp): Promise<{ op: UserOperation; set: RuleProbes; sender: Address }> {
  const set = probes[version][staked ? "staked" : "unstaked"];
  const accountSalt = salt++;
  const sender = factoryRule === undefined ? await set.deployAccount(accountSalt) : await set.accountAddress(accountSalt);
  const fund = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-3)!) });
  if (factoryRule !== undefined) await fixture.client.waitForTransactionReceipt({ hash: await fund.sendTransaction({ to: sender, value: parseEther("1") }) });
  const common = {
    sender,
    nonce: 0n,
    callData: encodeFunctionData({ abi: parseAbi(["function execute()"]), functionName: "execute" }),
    callGasLimit: 50_000n,
    verificationGasLimit: 1_500_000n,
    preVerificationGas: 300_000n,
    maxFeePerGas: parseGwei("20"),
    maxPriorityFeePerGas: parseGwei("1"),
    signature: toHex(accountRule),
  };
  const factoryData = factoryRule === undefined ? undefined : set.factoryData(accountSalt, factoryRule);
  if (version === "0.6") {
    return {
      set,
      sender,
      op: {
        ...common,
        initCode: factoryData ? concat([set.factory, factoryData]) : "0x",
        paymasterAndData: paymasterRule === undefined ? "0x" : concat([set.paymaster, toHex(paymasterRule)]),
      },
    };
  }
  return {
    set,
    sender,
    op: {
      ...common,
      ...(factoryData ? { factory: set.factory, factoryData } : {}),
      ...(paymasterRule === undefined
        ? {}
        : { paymaster: set.paymaster, paymasterVerificationGasLimit: 500_000n, paymasterPostOpGasLimit: 0n, paymasterData: toHex(paymasterRule) }),
    },
  };
}

interface Case extends RuleOp {
  name: string;
  /** The rule the validation breaks and the entity named, or undefined when it is allowed. */
  broken?: { rule: string; entity: "account" | "factory" | "paymaster"; subject: string };
}

const account = (rule: string, subject: string) => ({ rule, entity: "account" as const, subject });
const factory = (rule: string, subject: string) => ({ rule, entity: "factory" as const, subject });
const paymaster = (rule: string, subject: string) => ({ rule, entity: "paymaster" as const, subject });

const cases: Case[] = [
  { name: "a well-behaved account", accountRule: "OK" },
  { name: "account reads block.timestamp", accountRule: "TIMESTAMP", broken: account("OP-011", "uses banned opcode TIMESTAMP") },
  { name: "account reads block.number", accountRule: "NUMBER", broken: account("OP-011", "uses banned opcode NUMBER") },
  { name: "account reads block.coinbase", accountRule: "COINBASE", broken: account("OP-011", "uses banned opcode COINBASE") },
  { name: "account reads tx.origin", accountRule: "ORIGIN", broken: account("OP-011", "uses banned opcode ORIGIN") },
  { name: "account reads block.basefee", accountRule: "BASEFEE", broken: account("OP-011", "uses banned opcode BASEFEE") },
  { name: "unstaked account reads its own balance", accountRule: "SELFBALANCE", broken: account("OP-080", "uses SELFBALANCE") },
  { name: "account uses GAS not before a call", accountRule: "GAS", broken: account("OP-012", "uses GAS other than right before a call") },
  { name: "account uses GAS right before a call", accountRule: "GAS_CALL" },
  { name: "account reads unassociated storage", accountRule: "OTHER_STORAGE_READ", broken: account("STO-033", "reads slot") },
  { name: "account writes its associated storage in another contract", accountRule: "ASSOCIATED_STORAGE" },
  { name: "account checks the code size of an address without code", accountRule: "EXTCODESIZE_NO_CODE", broken: account("OP-041", "EXTCODESIZE of 0xdeaddeaddeaddeaddeaddeaddeaddeaddeaddead") },
  { name: "account calls with value", accountRule: "CALL_VALUE", broken: account("OP-061", "with value 1") },
  { name: "account calls the EntryPoint's balanceOf", accountRule: "ENTRYPOINT_BALANCE_OF", broken: account("OP-054", "calls the EntryPoint") },
  { name: "account calls ecrecover", accountRule: "ECRECOVER" },
  { name: "account without factory uses CREATE2", accountRule: "CREATE2", broken: account("OP-031", "uses banned opcode CREATE2") },
  { name: "account runs out of gas in a nested call", accountRule: "OUT_OF_GAS", broken: account("OP-020", "runs out of gas") },
  { name: "a well-behaved factory", factoryRule: "OK" },
  { name: "factory reads block.timestamp", factoryRule: "TIMESTAMP", broken: factory("OP-011", "uses banned opcode TIMESTAMP") },
  { name: "unstaked factory writes its own storage", factoryRule: "OWN_STORAGE", broken: factory("STO-031", "its own slot") },
  { name: "staked factory writes its own storage", factoryRule: "OWN_STORAGE", staked: true },
  { name: "new account writes its associated storage, unstaked factory", factoryRule: "OK", accountRule: "ASSOCIATED_STORAGE", broken: account("STO-022", "associated with an account not yet deployed") },
  { name: "new account writes its associated storage, staked factory", factoryRule: "OK", accountRule: "ASSOCIATED_STORAGE", staked: true },
  { name: "a well-behaved paymaster", paymasterRule: "OK" },
  { name: "paymaster reads block.number", paymasterRule: "NUMBER", broken: paymaster("OP-011", "uses banned opcode NUMBER") },
  { name: "unstaked paymaster writes its own storage", paymasterRule: "OWN_STORAGE", broken: paymaster("STO-031", "its own slot") },
  { name: "staked paymaster writes its own storage", paymasterRule: "OWN_STORAGE", staked: true },
  { name: "unstaked paymaster reads unassociated storage", paymasterRule: "OTHER_STORAGE_READ", broken: paymaster("STO-033", "reads slot") },
  { name: "staked paymaster reads unassociated storage", paymasterRule: "OTHER_STORAGE_READ", staked: true },
  { name: "unstaked paymaster reads another contract's balance", paymasterRule: "BALANCE", broken: paymaster("OP-080", "uses BALANCE") },
  { name: "staked paymaster reads another contract's balance", paymasterRule: "BALANCE", staked: true },
  { name: "paymaster writes the account's associated storage", paymasterRule: "ASSOCIATED_STORAGE" },
];

describe.each(["0.6", "0.7", "0.8"] as const)("safe mode on EntryPoint v%s", (version) => {
  it.each(cases)("$name", async ({ name: _, broken, ...rules }) => {
    const { op, set, sender } = await ruleOp(version, rules);
    const sent = bundler.sendUserOperation(op, set.entryPoint);
    if (!broken) {
      await expect(sent).resolves.toMatch(/^0x[0-9a-f]{64}$/);
      return;
    }
    const error = await rejection(sent);
    expect(error.code).toBe(RpcErrorCode.opcodeOrStorageRule);
    const at = getAddress({ account: sender, factory: set.factory, paymaster: set.paymaster }[broken.entity]);
    expect(error.message).toMatch(new RegExp(`^${broken.entity} ${at}\\b.*${escapeRegExp(broken.subject)}.*\\(${broken.rule}\\)`, "i"));
    expect(error.data).toMatchObject({ rule: broken.rule, [broken.entity]: at });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe.each(["0.6", "0.7", "0.8"] as const)("before bundling on EntryPoint v%s", (version) => {
  it("drops an operation whose account's code changed since validation (COD-010), with the reason in its record and status event", async () => {
    const { bundler: fresh, store } = await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } });
    const changes: StatusChange[] = [];
    fresh.onStatusChange((c) => changes.push(c));
    const { op, set, sender } = await ruleOp(version, { accountRule: "OK" });
    const hash = await fresh.sendUserOperation(op, set.entryPoint);
    const code = await fixture.client.getCode({ address: sender });
    await fixture.client.request({ method: "anvil_setCode", params: [sender, `${code}00`] } as never);
    expect(await fresh.sendBundleNow()).toEqual([]);
    const reason = expect.stringMatching(new RegExp(`^COD-010: the code of ${sender.toLowerCase()} changed`));
    expect(changes.at(-1)).toEqual({ userOpHash: hash, status: "dropped", reason });
    expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: reason });
    await fresh.stop();
  });

  it("bans a paymaster that fails the bundle after passing its second validation (GREP-040)", async () => {
    const { bundler: fresh, store } = await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } });
    const { op, set } = await ruleOp(version, { paymasterRule: "REVERT_IF_SHARED", staked: true });
    const hash = await fresh.sendUserOperation(op, set.entryPoint);
    const setShared = (value: bigint) =>
      deployer.writeContract({ address: set.target, abi: ruleProbeAbis.RuleTarget, functionName: "setShared", args: [value] }).then((h) => fixture.client.waitForTransactionReceipt({ hash: h }));
    await setShared(1n);
    try {
      expect(await fresh.sendBundleNow()).toEqual([]);
      expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: expect.stringMatching(/^AA33 /) });
      expect(await fresh.dumpReputation(set.entryPoint)).toContainEqual({ address: getAddress(set.paymaster), opsSeen: 10_000, opsIncluded: 0, status: "banned" });
    } finally {
      await setShared(0n);
      await fresh.stop();
    }
  });

  it("leaves in the pool an operation that reads storage of another bundled operation's sender (STO-041), and bundles it next time", async () => {
    const { bundler: fresh, store } = await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } });
    const first = await ruleOp(version, { accountRule: "OK" });
    const reader = await ruleOp(version, { accountRule: `READ:${first.sender.slice(2)}` });
    reader.op.signature = concat([toHex("READ:"), first.sender]);
    const firstHash = await fresh.sendUserOperation(first.op, first.set.entryPoint);
    const readerHash = await fresh.sendUserOperation(reader.op, reader.set.entryPoint);
    expect(await fresh.sendBundleNow()).toHaveLength(1);
    expect(await fresh.getUserOperationReceipt(firstHash)).toMatchObject({ success: true });
    expect(await store.get(readerHash)).toMatchObject({ status: "pending" });
    await fresh.sendBundleNow();
    expect(await fresh.getUserOperationReceipt(readerHash)).toMatchObject({ success: true });
    await fresh.stop();
  });
});
