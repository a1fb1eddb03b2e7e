import { deployRuleProbes, type EntryPointVersion, type RuleProbes } from "@bundlekit/devnet";
import { type Address, concat, createWalletClient, encodeFunctionData, http, parseAbi, parseEther, parseGwei, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { UserOperation } from "../src/userop/types.ts";
import { engineFixture } from "./fixtures.ts";

/** Which rule each entity of an operation runs during validation. */
export interface RuleOp {
  accountRule?: string;
  /** Deploy the account in the operation, running this rule in the factory. */
  factoryRule?: string;
  paymasterRule?: string;
  /** Use the staked factory and paymaster. */
  staked?: boolean;
}

/**
 * A devnet with the rule probes (contracts/rules/RuleProbes.sol in the devnet package) for each
 * EntryPoint version, an unstaked set and a staked one, and operations that run one rule each.
 */
export async function ruleProbesFixture() {
  const fixture = await engineFixture();
  const deployer = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-2)!) });
  const funder = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-3)!) });
  const probes = {} as Record<EntryPointVersion, { unstaked: RuleProbes; staked: RuleProbes }>;
  for (const version of ["0.6", "0.7", "0.8"] as const) {
    const unstaked = await deployRuleProbes(fixture.client, deployer, version);
    const staked = await deployRuleProbes(fixture.client, deployer, version);
    await staked.stake(staked.factory, 10);
    await staked.stake(staked.paymaster, 10);
    probes[version] = { unstaked, staked };
  }
  let salt = 1n;


  /** An operation of a fresh RuleAccount (deployed beforehand unless `factoryRule` is given), funded. */
  async function ruleOp(version: EntryPointVersion, { accountRule = "OK", factoryRule, paymasterRule, staked = false }: RuleOp): Promise<{ op: UserOperation; set: RuleProbes; sender: Address }> {
    const set = probes[version][staked ? "staked" : "unstaked"];
    const accountSalt = salt++;
    const sender = factoryRule === undefined ? await set.deployAccount(accountSalt) : await set.accountAddress(accountSalt);
    if (factoryRule !== undefined) await fixture.client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: sender, value: parseEther("1") }) });
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


  return { fixture, deployer, probes, ruleOp };
}

export interface RuleCase extends RuleOp {
  name: string;
  /** The rule the validation breaks and the entity named, or undefined when it is allowed. */
  broken?: { rule: string; entity: "account" | "factory" | "paymaster"; subject: string };
}

const account = (rule: string, subject: string) => ({ rule, entity: "account" as const, subject });
const factory = (rule: string, subject: string) => ({ rule, entity: "factory" as const, subject });
const paymaster = (rule: string, subject: string) => ({ rule, entity: "paymaster" as const, subject });

/** One rule per case, for each entity, with its allowed variants: what safe mode must refuse or accept. */
export const ruleCases: RuleCase[] = [
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

