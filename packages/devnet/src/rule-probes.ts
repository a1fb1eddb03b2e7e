import { createRequire } from "node:module";
import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  type Hex,
  parseEther,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import { CANONICAL_DEPLOYMENTS, type EntryPointVersion } from "./addresses.ts";

type ProbeName = "RuleTarget" | "RuleAccount" | "RuleFactory" | "RulePaymaster";
const compiled = createRequire(import.meta.url)("../contracts/rules/RuleProbes.json") as {
  contracts: Record<ProbeName, { abi: Abi; bytecode: Hex }>;
};

/** ABIs of the rule probes (contracts/rules/RuleProbes.sol). */
export const ruleProbeAbis = Object.fromEntries(Object.entries(compiled.contracts).map(([name, c]) => [name, c.abi])) as Record<ProbeName, Abi>;

/** Rule probes deployed for one EntryPoint: a factory and a paymaster that run the rule they are given, and a target contract to reach into. */
export interface RuleProbes {
  version: EntryPointVersion;
  entryPoint: Address;
  target: Address;
  factory: Address;
  paymaster: Address;
  /** The counterfactual account (a RuleAccountProxy to the factory's RuleAccount) the factory creates for `salt`. */
  accountAddress(salt: bigint): Promise<Address>;
  /** `factoryData` of a deployment of the account for `salt` that runs `rule` during deployment. */
  factoryData(salt: bigint, rule: string): Hex;
  /** Deploy and fund the account for `salt` (validation then runs as an existing account's). */
  deployAccount(salt: bigint, fund?: bigint): Promise<Address>;
  /** Stake `entity` (the factory, the paymaster or a deployed account) with 1 ETH and `unstakeDelaySec`. */
  stake(entity: Address, unstakeDelaySec: number): Promise<void>;
}

type Wallet = WalletClient<Transport, Chain, Account>;

/**
 * Deploy the rule probes for `version`'s canonical EntryPoint with `wallet`, and deposit 10 ETH
 * for the paymaster. Each validation then runs the rule its operation names: the account reads it
 * from the signature, the paymaster from its paymaster data, the factory from `factoryData`.
 */
export async function deployRuleProbes(client: PublicClient, wallet: Wallet, version: EntryPointVersion): Promise<RuleProbes> {
  const entryPoint = CANONICAL_DEPLOYMENTS[version].entryPoint;
  const send = async (request: Promise<Hex>) => client.waitForTransactionReceipt({ hash: await request });
  const deploy = async (name: ProbeName, args: readonly unknown[]) => {
    const { abi, bytecode } = compiled.contracts[name];
    const receipt = await send(wallet.deployContract({ abi, bytecode, args }));
    return receipt.contractAddress!;
  };
  const target = await deploy("RuleTarget", []);
  const [factory, paymaster] = [await deploy("RuleFactory", [entryPoint, target]), await deploy("RulePaymaster", [entryPoint, target])];
  await send(wallet.writeContract({ address: paymaster, abi: compiled.contracts.RulePaymaster.abi, functionName: "deposit", value: parseEther("10") }));
  const factoryAbi = compiled.contracts.RuleFactory.abi;
  const probes: RuleProbes = {
    version,
    entryPoint,
    target,
    factory,
    paymaster,
    accountAddress: (salt) => client.readContract({ address: factory, abi: factoryAbi, functionName: "getAddress", args: [salt] }) as Promise<Address>,
    factoryData: (salt, rule) => encodeFunctionData({ abi: factoryAbi, functionName: "createAccount", args: [salt, rule] }),
    async deployAccount(salt, fund = parseEther("1")) {
      await send(wallet.writeContract({ address: factory, abi: factoryAbi, functionName: "createAccount", args: [salt, ""] }));
      const account = await probes.accountAddress(salt);
      if (fund > 0n) await send(wallet.sendTransaction({ to: account, value: fund }));
      return account;
    },
    async stake(entity, unstakeDelaySec) {
      await send(wallet.writeContract({ address: entity, abi: factoryAbi, functionName: "addStake", args: [unstakeDelaySec], value: parseEther("1") }));
    },
  };
  return probes;
}
