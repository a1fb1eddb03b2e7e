import { deployRuleProbes, type EntryPointVersion, type RuleProbes } from "@bundlekit/devnet";
import { type Address, concat, createWalletClient, encodeFunctionData, getAddress, http, parseAbi, parseEther, parseGwei, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import { createBundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { Simulator } from "../src/ports/simulator.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { createSimulator } from "../src/validation/create-simulator.ts";
import { engineFixture, rejection, testSigner } from "./fixtures.ts";

/** Which rule each entity of an operation runs during validation. */
export interface RuleOp {
  accountRule?: string;
  /** Deploy the account in the operation, running this rule in the factory. */
  factoryRule?: string;
  paymasterRule?: string;
  /** Use the staked factory and paymaster. */
  staked?: boolean;
}

/** The engine settings of the rule tests: 1 ETH staked for 10 s counts as staked. */
export const ruleTestStake = { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 };

/**
 * A devnet with the rule probes (contracts/rules/RuleProbes.sol in the devnet package) for each
 * EntryPoint version, an unstaked set and a staked one, and operations that run one rule each.
 * The factories and paymasters hold 1 ETH of their own, to pay `depositTo` with value.
 */
export async function ruleProbesFixture() {
  const fixture = await engineFixture();
  const deployer = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-2)!) });
  const funder = createWalletClient({ chain: fixture.devnet.chain, transport: http(fixture.devnet.rpcUrl), account: privateKeyToAccount(fixture.devnet.accountKeys.at(-3)!) });
  const probes = {} as Record<EntryPointVersion, { unstaked: RuleProbes; staked: RuleProbes }>;
  for (const version of ["0.6", "0.7", "0.8", "0.9"] as const) {
    const unstaked = await deployRuleProbes(fixture.client, deployer, version);
    const staked = await deployRuleProbes(fixture.client, deployer, version);
    await staked.stake(staked.factory, 10);
    await staked.stake(staked.paymaster, 10);
    for (const entity of [unstaked.factory, unstaked.paymaster, staked.factory, staked.paymaster]) {
      await fixture.client.request({ method: "anvil_setBalance", params: [entity, toHex(parseEther("1"))] } as never);
    }
    probes[version] = { unstaked, staked };
  }
  let salt = 1n;
  /** One in-process simulator for every engine of the file, made on first use. */
  let simulator: Simulator | undefined;

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


  /**
   * An engine of its own for one case: a fresh pool and fresh reputation, so that no case sees
   * another's operations or counts, whatever the order. Engines share the file's simulator.
   */
  async function isolatedBundler() {
    simulator ??= createSimulator(fixture.client as unknown as ChainClient, fixture.devnet.chainId, {
      mode: "safe",
      tracer: "in-process",
      tracerWorkers: 2,
      p256Precompile: false,
    });
    const shared = simulator;
    return createBundler({
      client: fixture.client as unknown as ChainClient,
      store: createMemoryMempoolStore(),
      signer: testSigner(fixture.devnet.relayerKeys),
      // The simulator outlives the engine: the engine's stop() must not close it.
      simulator: { mode: shared.mode, tracer: shared.tracer, simulateValidation: (...args) => shared.simulateValidation(...args), close: async () => {} },
      settings: { bundling: { mode: "manual" }, reputation: ruleTestStake },
    });
  }

  /**
   * Send the case's operation to an engine of its own: admitted when allowed, else refused with
   * -32502 naming the entity, the subject and the rule, and no other violation.
   */
  async function expectRuleOutcome(version: EntryPointVersion, { name: _, broken, ...rules }: RuleCase) {
    const { op, set, sender } = await ruleOp(version, rules);
    const bundler = await isolatedBundler();
    try {
      const sent = bundler.sendUserOperation(op, set.entryPoint);
      if (!broken) {
        await expect(sent).resolves.toMatch(/^0x[0-9a-f]{64}$/);
        return;
      }
      const error = await rejection(sent);
      expect(error.code, error.message).toBe(RpcErrorCode.opcodeOrStorageRule);
      const at = getAddress({ account: sender, factory: set.factory, paymaster: set.paymaster }[broken.entity]);
      expect(error.message).toMatch(new RegExp(`^${broken.entity} ${at}\\b.*${escapeRegExp(broken.subject)}.*\\(${broken.rule}\\)$`, "i"));
      expect(error.data).toMatchObject({ rule: broken.rule, [broken.entity]: at, violations: [{ rule: broken.rule, entity: broken.entity }] });
    } finally {
      await bundler.stop();
    }
  }

  /** Close the file's simulator (its worker threads). */
  async function close() {
    await simulator?.close();
  }

  return { fixture, deployer, probes, ruleOp, expectRuleOutcome, close };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
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


type Entity = "account" | "factory" | "paymaster";
const entities: Entity[] = ["account", "factory", "paymaster"];

/** The case of `entity` running `rule` (an account runs it deployed, without a factory; a factory deploys the account). */
function entityCase(entity: Entity, rule: string, name: string, staked: boolean, broken?: { rule: string; subject: string }): RuleCase {
  const rules: RuleOp = entity === "account" ? { accountRule: rule } : entity === "factory" ? { factoryRule: rule } : { paymasterRule: rule };
  return { name: `${entity}${staked ? " (staked)" : ""}: ${name}`, ...rules, ...(staked ? { staked } : {}), ...(broken ? { broken: { ...broken, entity } } : {}) };
}

/** Which entity an EntryPoint access is allowed to (OP-051 to OP-055), and the subject of its violation otherwise. */
const entryPointAccesses: { rule: string; name: string; allowedTo: Entity[]; subject: string }[] = [
  { rule: "ENTRYPOINT_CODESIZE_ISZERO", name: "checks the EntryPoint has code, EXTCODESIZE then ISZERO (OP-051)", allowedTo: entities, subject: "" },
  { rule: "ENTRYPOINT_CODESIZE", name: "reads the EntryPoint's code size without ISZERO", allowedTo: [], subject: "uses EXTCODESIZE on the EntryPoint" },
  { rule: "ENTRYPOINT_CODEHASH", name: "reads the EntryPoint's code hash", allowedTo: [], subject: "uses EXTCODEHASH on the EntryPoint" },
  { rule: "ENTRYPOINT_BALANCE_OF", name: "calls the EntryPoint's balanceOf", allowedTo: [], subject: "calls the EntryPoint (0x70a08231)" },
  { rule: "ENTRYPOINT_DEPOSIT_FOR_SENDER", name: "calls depositTo(sender) with value (OP-052)", allowedTo: ["account", "factory"], subject: "calls the EntryPoint (0xb760faf9)" },
  { rule: "ENTRYPOINT_DEPOSIT_FOR_TARGET", name: "calls depositTo for another address than the sender", allowedTo: [], subject: "calls the EntryPoint (0xb760faf9)" },
  { rule: "ENTRYPOINT_FALLBACK", name: "pays the EntryPoint's fallback (OP-053)", allowedTo: ["account"], subject: "calls the EntryPoint (fallback)" },
  { rule: "ENTRYPOINT_INCREMENT_NONCE", name: "calls incrementNonce (OP-055)", allowedTo: ["account"], subject: "calls the EntryPoint (0x0bd28e3b)" },
];

const noCode = "0xdeaddeaddeaddeaddeaddeaddeaddeaddeaddead";

/**
 * Every rule the probes can break, for the account, the factory and the paymaster: the violation
 * and its allowed variant (staked, right before a call, associated storage, a precompile, …). The
 * account is never staked here, so its staked variants are the factory's and the paymaster's; an
 * account deployed in the operation runs the cases of OP-031/032, EREP-060 and STO-022 at the end.
 */
export const ruleMatrix: RuleCase[] = [
  ...entities.flatMap((entity) => {
    const cases: RuleCase[] = [entityCase(entity, "OK", "validates without touching anything", false)];
    /** Broken when unstaked, allowed when staked (the account only unstaked). */
    const both = (rule: string, name: string, broken: { rule: string; subject: string }) => [
      entityCase(entity, rule, name, false, broken),
      ...(entity === "account" ? [] : [entityCase(entity, rule, name, true)]),
    ];
    /** Broken staked or not. */
    const always = (rule: string, name: string, broken: { rule: string; subject: string }) => [
      entityCase(entity, rule, name, false, broken),
      ...(entity === "account" ? [] : [entityCase(entity, rule, name, true, broken)]),
    ];
    const opcodes = ["TIMESTAMP", "NUMBER", "COINBASE", "ORIGIN", "GASPRICE", "GASLIMIT", "BASEFEE", "PREVRANDAO", "BLOCKHASH", "BLOBHASH", "BLOBBASEFEE"];
    for (const opcode of opcodes) {
      cases.push(entityCase(entity, opcode, `reads ${opcode}`, false, { rule: "OP-011", subject: `uses banned opcode ${opcode}` }));
    }
    cases.push(
      ...always("INVALID", "runs INVALID in a nested call", { rule: "OP-011", subject: "uses banned opcode INVALID" }),
      ...always("SELFDESTRUCT", "makes a contract SELFDESTRUCT", { rule: "OP-011", subject: "uses banned opcode SELFDESTRUCT" }),
      ...always("UNASSIGNED", "calls code that runs the unassigned opcode 0x0c", { rule: "OP-013", subject: "uses unassigned opcode 0x0c" }),
      entityCase(entity, "GAS", "uses GAS not before a call", false, { rule: "OP-012", subject: "uses GAS other than right before a call" }),
      entityCase(entity, "GAS_CALL", "uses GAS right before a call", false),
      entityCase(entity, "OUT_OF_GAS", "runs out of gas in a nested call", false, { rule: "OP-020", subject: "runs out of gas" }),
      entityCase(entity, "EXTCODESIZE_NO_CODE", "checks the code size of an address without code", false, { rule: "OP-041", subject: `EXTCODESIZE of ${noCode}` }),
      entityCase(entity, "EXTCODEHASH_NO_CODE", "reads the code hash of an address without code", false, { rule: "OP-041", subject: `EXTCODEHASH of ${noCode}` }),
      entityCase(entity, "CALL_NO_CODE", "calls an address without code", false, { rule: "OP-041", subject: `CALL to ${noCode}` }),
      entityCase(entity, "STATICCALL_NO_CODE", "static-calls an address without code", false, { rule: "OP-041", subject: `STATICCALL to ${noCode}` }),
      entityCase(entity, "CALL_SENDER", "calls the sender (before it has code, from the factory: OP-042)", false),
      entityCase(entity, "EXTCODEHASH_SENDER", "reads the sender's code hash (before it has code, from the factory: OP-042)", false),
      entityCase(entity, "CALL_VALUE", "calls with value", false, { rule: "OP-061", subject: "with value 1" }),
      entityCase(entity, "ECRECOVER", "calls the ecrecover precompile", false),
      entityCase(entity, "PRECOMPILES", "calls every precompile from 0x02 to 0x11 with a valid input", false),
      entityCase(entity, "P256VERIFY", "calls P256VERIFY (0x100) on a chain without it", false, { rule: "OP-062", subject: "calls precompile 0x0000000000000000000000000000000000000100, which is not allowed" }),
      ...both("BALANCE", "reads another contract's balance", { rule: "OP-080", subject: "uses BALANCE" }),
      ...both("SELFBALANCE", "reads its own balance", { rule: "OP-080", subject: "uses SELFBALANCE" }),
      ...both("OTHER_STORAGE_READ", "reads storage not associated with it", { rule: "STO-033", subject: "reads slot" }),
      ...both("TRANSIENT_OTHER_READ", "reads transient storage not associated with it (OP-070)", { rule: "STO-033", subject: "reads transient slot" }),
    );
    for (const access of entryPointAccesses) {
      const allowed = access.allowedTo.includes(entity);
      cases.push(entityCase(entity, access.rule, access.name, false, allowed ? undefined : { rule: "OP-054", subject: access.subject }));
    }
    if (entity === "account") {
      cases.push(
        entityCase(entity, "OWN_STORAGE", "writes its own storage", false),
        entityCase(entity, "TRANSIENT_OWN", "writes and reads its own transient storage (OP-070)", false),
        entityCase(entity, "ASSOCIATED_STORAGE", "writes its associated storage in another contract", false),
        entityCase(entity, "TRANSIENT_ASSOCIATED", "writes its associated transient storage in another contract (OP-070)", false),
        entityCase(entity, "CREATE2", "uses CREATE2 without a factory", false, { rule: "OP-031", subject: "uses banned opcode CREATE2" }),
        entityCase(entity, "CREATE", "uses CREATE without a factory", false, { rule: "OP-011", subject: "uses banned opcode CREATE" }),
        entityCase(entity, "CREATE_IN_HELPER", "makes another contract CREATE", false, { rule: "OP-011", subject: "uses banned opcode CREATE (from" }),
      );
    } else {
      cases.push(
        ...both("OWN_STORAGE", "writes its own storage", { rule: "STO-031", subject: "its own slot" }),
        ...both("TRANSIENT_OWN", "writes and reads its own transient storage (OP-070)", { rule: "STO-031", subject: "its own transient slot" }),
        ...both("OWN_ASSOCIATED_STORAGE", "writes storage associated with itself in another contract", { rule: "STO-032", subject: "associated with it" }),
      );
    }
    if (entity === "factory") {
      cases.push(
        ...both("ASSOCIATED_STORAGE", "writes the new account's associated storage", { rule: "STO-022", subject: "associated with an account not yet deployed" }),
        ...both("TRANSIENT_ASSOCIATED", "writes the new account's associated transient storage (OP-070)", {
          rule: "STO-022",
          subject: "transient slot",
        }),
        ...both("CREATE2", "uses CREATE2 for another contract than the account", { rule: "OP-031", subject: "uses banned opcode CREATE2" }),
        ...both("CREATE", "uses CREATE (EREP-060 when staked)", { rule: "OP-011", subject: "uses banned opcode CREATE" }),
        ...both("CREATE_IN_HELPER", "makes another contract CREATE (EREP-061 when staked)", { rule: "OP-011", subject: "uses banned opcode CREATE (from" }),
        entityCase(entity, "CREATE_OUT_OF_GAS", "makes another contract CREATE with init code that runs out of gas", true, { rule: "OP-020", subject: "runs out of gas" }),
        entityCase(entity, "CREATE_REVERTS", "makes another contract CREATE with init code that reverts", true),
      );
    }
    if (entity === "paymaster") {
      cases.push(
        entityCase(entity, "ASSOCIATED_STORAGE", "writes the account's associated storage", false),
        entityCase(entity, "TRANSIENT_ASSOCIATED", "writes the account's associated transient storage (OP-070)", false),
        ...always("CREATE2", "uses CREATE2", { rule: "OP-031", subject: "uses banned opcode CREATE2" }),
        ...always("CREATE", "uses CREATE", { rule: "OP-011", subject: "uses banned opcode CREATE" }),
        ...always("CREATE_IN_HELPER", "makes another contract CREATE", { rule: "OP-011", subject: "uses banned opcode CREATE (from" }),
      );
    }
    return cases;
  }),
  ...deployedAccountCases(),
];

/** The account deployed by the operation's factory, unstaked or staked. */
function deployedAccountCases(): RuleCase[] {
  const deployed = (rule: string, name: string, staked: boolean, broken?: { rule: string; subject: string }): RuleCase => ({
    name: `account deployed by ${staked ? "a staked" : "an unstaked"} factory: ${name}`,
    factoryRule: "OK",
    accountRule: rule,
    ...(staked ? { staked } : {}),
    ...(broken ? { broken: { ...broken, entity: "account" as const } } : {}),
  });
  return [
    deployed("CREATE", "uses CREATE (OP-032)", false),
    deployed("CREATE_IN_HELPER", "makes another contract CREATE", false, { rule: "OP-011", subject: "uses banned opcode CREATE (from" }),
    deployed("CREATE_IN_HELPER", "makes another contract CREATE", true, { rule: "OP-011", subject: "uses banned opcode CREATE (from" }),
    deployed("CREATE2", "uses CREATE2", false, { rule: "OP-031", subject: "uses banned opcode CREATE2" }),
    deployed("CREATE2", "uses CREATE2 (EREP-060)", true),
    deployed("ASSOCIATED_STORAGE", "writes its associated storage", false, { rule: "STO-022", subject: "associated with an account not yet deployed" }),
    deployed("ASSOCIATED_STORAGE", "writes its associated storage", true),
    deployed("TRANSIENT_ASSOCIATED", "writes its associated transient storage (OP-070)", false, { rule: "STO-022", subject: "transient slot" }),
  ];
}
