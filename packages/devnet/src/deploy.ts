import {
  type Address,
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  type Hash,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  parseAbi,
  size,
  type TestClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  CANONICAL_DEPLOYMENTS,
  CREATE2_DEPLOYER,
  ENTRY_POINT_VERSIONS,
  type EntryPointVersion,
  PLACED_RELEASES,
  ZERO_SALT,
} from "./addresses.ts";
import { loadArtifact } from "./artifacts.ts";
import { devnetChain } from "./chain.ts";
import {
  addStakeCall,
  type DevnetPaymasters,
  PAYMASTER_DEPOSIT,
  PAYMASTER_STAKE,
  PAYMASTER_UNSTAKE_DELAY,
  paymasterInitCodes,
} from "./paymasters.ts";

/** What the devnet deploys for one EntryPoint version. */
export interface DevnetDeployment {
  entryPoint: Address;
  simpleAccountFactory: Address;
  version: EntryPointVersion;
  /** Paymasters of this version, with deposits on its EntryPoint. */
  paymasters: DevnetPaymasters;
  /** v0.8+: `Simple7702Account`, the delegate of EIP-7702 accounts, at its canonical address. */
  simple7702Account: Address | undefined;
}

/** Options for {@link deployErc4337Contracts}. */
export interface DeployOptions {
  /** JSON-RPC endpoint of the (anvil) node. */
  rpcUrl: string;
  /** Private key of a funded account that pays for the deployment transactions; it owns the paymasters. */
  deployerKey: Hex;
  /**
   * Set when the node uses interval mining: the deployment then mines its own blocks with
   * `evm_mine` instead of waiting for the next interval. Default false (automine).
   */
  mineBlocks?: boolean;
}

interface PlannedContract {
  label: string;
  /** Where CREATE2 puts it. */
  address: Address;
  salt: Hex;
  initCode: Hex;
  runtimeSize: number;
  /**
   * A release candidate's contract (`PLACED_RELEASES`): the canonical address its runtime code is
   * copied to once deployed at `address`, which is where the devnet's users find it.
   */
  placeAt?: Address;
}

/** Where a planned contract is used from: its canonical address when placed there, else where CREATE2 put it. */
const finalAddress = (c: PlannedContract): Address => c.placeAt ?? c.address;

function plan(version: EntryPointVersion, owner: Address) {
  const canonical = CANONICAL_DEPLOYMENTS[version];
  const placed = PLACED_RELEASES.has(version);
  const ep = loadArtifact(version, "EntryPoint");
  const factory = loadArtifact(version, "SimpleAccountFactory");
  const entryPoint = planContract(
    `EntryPoint v${version}`,
    canonical.entryPoint,
    canonical.entryPointSalt,
    ep.bytecode,
    size(ep.deployedBytecode),
    placed,
  );
  // The factory's constructor takes the EntryPoint, so its init code (and hence its CREATE2
  // address) depends on the EntryPoint address.
  const factoryInitCode = concat([
    factory.bytecode,
    encodeAbiParameters([{ type: "address" }], [finalAddress(entryPoint)]),
  ]);
  const factoryPlan = planContract(
    `SimpleAccountFactory v${version}`,
    canonical.simpleAccountFactory,
    canonical.simpleAccountFactorySalt,
    factoryInitCode,
    size(factory.deployedBytecode),
    placed,
  );
  const paymasters = paymasterInitCodes(version, finalAddress(entryPoint), owner);
  const verifyingPaymaster = planContract(
    `VerifyingPaymaster v${version}`,
    undefined,
    ZERO_SALT,
    paymasters.verifying.initCode,
    size(paymasters.verifying.artifact.deployedBytecode),
  );
  const postOpWorkPaymaster =
    paymasters.postOpWork &&
    planContract(
      `PostOpWorkPaymaster v${version}`,
      undefined,
      ZERO_SALT,
      paymasters.postOpWork.initCode,
      size(paymasters.postOpWork.artifact.deployedBytecode),
    );
  const simple7702 = canonical.simple7702Account && loadArtifact(version, "Simple7702Account");
  // v0.8's takes no constructor arguments (its EntryPoint is a constant); later ones take the EntryPoint.
  const simple7702InitCode =
    simple7702 &&
    concat([
      simple7702.bytecode,
      ...(version === "0.8" ? [] : [encodeAbiParameters([{ type: "address" }], [finalAddress(entryPoint)])]),
    ]);
  const simple7702Account =
    simple7702 &&
    simple7702InitCode &&
    planContract(
      `Simple7702Account v${version}`,
      canonical.simple7702Account,
      ZERO_SALT,
      simple7702InitCode,
      size(simple7702.deployedBytecode),
      placed,
    );
  return {
    entryPoint,
    factory: factoryPlan,
    verifyingPaymaster,
    postOpWorkPaymaster,
    simple7702Account,
    /** Everything deployed once the EntryPoint is. */
    others: [factoryPlan, verifyingPaymaster, ...(postOpWorkPaymaster ? [postOpWorkPaymaster] : []), ...(simple7702Account ? [simple7702Account] : [])],
  };
}

function planContract(
  label: string,
  canonical: Address | undefined,
  salt: Hex,
  initCode: Hex,
  runtimeSize: number,
  placed = false,
): PlannedContract {
  const address = getContractAddress({
    opcode: "CREATE2",
    from: CREATE2_DEPLOYER,
    salt,
    bytecode: initCode,
  });
  if (placed && canonical !== undefined) {
    if (isAddressEqual(address, canonical)) {
      throw new Error(`${label}: the release's code now reproduces the canonical ${canonical}; deploy it as the other versions, no longer by placing it`);
    }
    return { label, address, salt, initCode, runtimeSize, placeAt: canonical };
  }
  if (canonical !== undefined && !isAddressEqual(address, canonical)) {
    // The artifacts no longer reproduce the canonical address (e.g. a different contracts release
    // was installed). Fail loudly: callers rely on the canonical addresses.
    throw new Error(
      `${label}: CREATE2 address of the installed artifact is ${address}, not the canonical ` +
        `${canonical}; check the @account-abstraction/contracts version`,
    );
  }
  return { label, address, salt, initCode, runtimeSize };
}

interface Transaction {
  label: string;
  to: Address;
  data: Hex;
  value?: bigint;
}

/**
 * Deploys EntryPoint v0.6, v0.7, v0.8 and v0.9 and their SimpleAccountFactory at their canonical
 * addresses, through the CREATE2 deployer that anvil pre-deploys, with `Simple7702Account`
 * (v0.8, v0.9) and the devnet's paymasters (salt 0), whose deposits (and the postOp paymasters'
 * stakes) it funds. v0.9's contracts are those of the 0.9.0-rc.1 npm release, whose code does not
 * CREATE2 to the canonical addresses: they are deployed with CREATE2 and their runtime code is
 * then placed at the canonical addresses with `anvil_setCode` (`PLACED_RELEASES`). Contracts that
 * already have code, and paymasters already funded, are skipped, so it is safe to call on a node
 * that has them. Verifies the code afterwards and throws a descriptive error if anything is missing.
 */
export async function deployErc4337Contracts(
  options: DeployOptions,
): Promise<Record<EntryPointVersion, DevnetDeployment>> {
  const transport = http(options.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ transport, pollingInterval: 20 });
  const chainId = await publicClient.getChainId();
  const chain = devnetChain(chainId, options.rpcUrl);
  const account = privateKeyToAccount(options.deployerKey);
  const wallet = createWalletClient({ account, chain, transport });
  const testClient = createTestClient({ mode: "anvil", chain, transport });

  const plans = ENTRY_POINT_VERSIONS.map((version) => ({ version, ...plan(version, account.address) }));

  const sendAll = async (transactions: Transaction[]): Promise<void> => {
    if (transactions.length === 0) return;
    const firstNonce = await publicClient.getTransactionCount({
      address: account.address,
      blockTag: "pending",
    });
    // One after another, in nonce order: sent in parallel, a transaction could reach anvil before
    // the one whose nonce precedes it and wait in its pool unmined, with the deployment waiting on it.
    const hashes: Hash[] = [];
    for (const [i, t] of transactions.entries()) {
      hashes.push(await wallet.sendTransaction({ to: t.to, data: t.data, value: t.value ?? 0n, nonce: firstNonce + i }));
    }
    if (options.mineBlocks) await testClient.mine({ blocks: 1 });
    const receipts = await Promise.all(
      hashes.map((hash) => publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })),
    );
    receipts.forEach((receipt, i) => {
      if (receipt.status !== "success") {
        throw new Error(`${transactions[i]!.label} reverted (tx ${receipt.transactionHash})`);
      }
    });
  };
  const deployAll = async (contracts: PlannedContract[]): Promise<void> => {
    const codes = await Promise.all(
      contracts.map((c) => publicClient.getCode({ address: c.address })),
    );
    const missing = contracts.filter((_, i) => codes[i] === undefined || codes[i] === "0x");
    await sendAll(
      missing.map((c) => ({ label: `deploying ${c.label}`, to: CREATE2_DEPLOYER, data: concat([c.salt, c.initCode]) })),
    );
  };

  // The factories' and paymasters' constructors talk to their EntryPoint (v0.8 reads
  // `senderCreator()`), so all EntryPoints must be mined, and placed, before they are sent (and
  // gas-estimated).
  await deployAll(plans.map((p) => p.entryPoint));
  await placeAll(publicClient, testClient, plans.map((p) => p.entryPoint));
  await deployAll(plans.flatMap((p) => p.others));
  await placeAll(publicClient, testClient, plans.flatMap((p) => p.others));
  await verify(
    publicClient,
    plans.flatMap((p) => [p.entryPoint, ...p.others]),
  );
  await sendAll(await fundingTransactions(publicClient, plans));

  const result = {} as Record<EntryPointVersion, DevnetDeployment>;
  for (const p of plans) {
    result[p.version] = {
      version: p.version,
      entryPoint: finalAddress(p.entryPoint),
      simpleAccountFactory: finalAddress(p.factory),
      paymasters: { verifying: p.verifyingPaymaster.address, postOpWork: p.postOpWorkPaymaster?.address },
      simple7702Account: p.simple7702Account && finalAddress(p.simple7702Account),
    };
  }
  return result;
}

/** Deposits for paymasters that have none, and stakes for the postOp paymasters that have none. */
async function fundingTransactions(client: PublicClient, plans: readonly ReturnType<typeof plan>[]): Promise<Transaction[]> {
  const transactions: Transaction[] = [];
  for (const p of plans) {
    const entryPoint = finalAddress(p.entryPoint);
    for (const paymaster of [p.verifyingPaymaster, p.postOpWorkPaymaster]) {
      if (!paymaster) continue;
      const info = await client.readContract({ address: entryPoint, abi: stakeManagerAbi, functionName: "getDepositInfo", args: [paymaster.address] });
      if (info.deposit === 0n) {
        transactions.push({
          label: `funding ${paymaster.label}`,
          to: entryPoint,
          data: encodeFunctionData({ abi: stakeManagerAbi, functionName: "depositTo", args: [paymaster.address] }),
          value: PAYMASTER_DEPOSIT,
        });
      }
      if (paymaster === p.postOpWorkPaymaster && info.stake === 0n) {
        transactions.push({ label: `staking ${paymaster.label}`, to: paymaster.address, data: addStakeCall(PAYMASTER_UNSTAKE_DELAY), value: PAYMASTER_STAKE });
      }
    }
  }
  return transactions;
}

const stakeManagerAbi = [
  {
    type: "function",
    name: "getDepositInfo",
    stateMutability: "view",
    inputs: [{ name: "account", type: "address" }],
    outputs: [
      {
        type: "tuple",
        components: [
          { name: "deposit", type: "uint256" },
          { name: "staked", type: "bool" },
          { name: "stake", type: "uint112" },
          { name: "unstakeDelaySec", type: "uint32" },
          { name: "withdrawTime", type: "uint48" },
        ],
      },
    ],
  },
  { type: "function", name: "depositTo", stateMutability: "payable", inputs: [{ name: "account", type: "address" }], outputs: [] },
] as const;

/**
 * Copies the runtime code of each contract with a `placeAt` to that canonical address, unless it
 * has code already. An EntryPoint is placed as its constructor would have left it at the
 * canonical address: its `SenderCreator` (which accepts calls only from the EntryPoint that
 * created it) at CREATE(EntryPoint, nonce 1), where the engine looks for it, answering to the
 * canonical address, and the EntryPoint's nonce at 2. Its cached EIP-712 domain names the CREATE2
 * address, so at the canonical address it computes its domain separator afresh, as it must.
 */
async function placeAll(client: PublicClient, testClient: TestClient, contracts: PlannedContract[]): Promise<void> {
  const hex = (address: Address) => address.slice(2).toLowerCase();
  for (const c of contracts) {
    if (c.placeAt === undefined) continue;
    const existing = await client.getCode({ address: c.placeAt });
    if (existing !== undefined && existing !== "0x") continue;
    const code = await client.getCode({ address: c.address });
    if (code === undefined || code === "0x") throw new Error(`${c.label}: no code at ${c.address} to place at ${c.placeAt}`);
    if (!c.label.startsWith("EntryPoint")) {
      await testClient.setCode({ address: c.placeAt, bytecode: code });
      continue;
    }
    const senderCreator = await client.readContract({ address: c.address, abi: senderCreatorAbi, functionName: "senderCreator" });
    const creatorCode = await client.getCode({ address: senderCreator });
    const placedCreator = getContractAddress({ from: c.placeAt, nonce: 1n });
    if (creatorCode === undefined || !creatorCode.toLowerCase().includes(hex(c.address)) || !code.toLowerCase().includes(hex(senderCreator))) {
      throw new Error(`${c.label}: its SenderCreator at ${senderCreator} and it do not name each other; cannot place it at ${c.placeAt}`);
    }
    await testClient.setCode({
      address: placedCreator,
      bytecode: creatorCode.toLowerCase().replaceAll(hex(c.address), hex(c.placeAt)) as Hex,
    });
    await testClient.setCode({ address: c.placeAt, bytecode: code.toLowerCase().replaceAll(hex(senderCreator), hex(placedCreator)) as Hex });
    await testClient.setNonce({ address: c.placeAt, nonce: 2 });
  }
}

const senderCreatorAbi = parseAbi(["function senderCreator() view returns (address)"]);

async function verify(client: PublicClient, contracts: PlannedContract[]): Promise<void> {
  const codes = await Promise.all(contracts.map((c) => client.getCode({ address: finalAddress(c) })));
  const problems = contracts.flatMap((c, i) => {
    const code = codes[i];
    const address = finalAddress(c);
    if (code === undefined || code === "0x") return [`${c.label}: no code at ${address}`];
    // Immutables change bytes but not the length, so the size identifies the contract.
    if (size(code) !== c.runtimeSize) {
      return [`${c.label}: code at ${address} is ${size(code)} bytes, expected ${c.runtimeSize}`];
    }
    return [];
  });
  if (problems.length > 0) {
    throw new Error(`ERC-4337 contract deployment failed:\n  ${problems.join("\n  ")}`);
  }
}
