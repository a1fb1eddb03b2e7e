import {
  type Address,
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  getContractAddress,
  type Hash,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  size,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  CANONICAL_DEPLOYMENTS,
  CREATE2_DEPLOYER,
  ENTRY_POINT_VERSIONS,
  type EntryPointVersion,
} from "./addresses.ts";
import { loadArtifact } from "./artifacts.ts";
import { devnetChain } from "./chain.ts";

/** Where one EntryPoint version and its SimpleAccountFactory are deployed on the devnet. */
export interface DevnetDeployment {
  entryPoint: Address;
  simpleAccountFactory: Address;
  version: EntryPointVersion;
}

/** Options for {@link deployErc4337Contracts}. */
export interface DeployOptions {
  /** JSON-RPC endpoint of the (anvil) node. */
  rpcUrl: string;
  /** Private key of a funded account that pays for the deployment transactions. */
  deployerKey: Hex;
  /**
   * Set when the node uses interval mining: the deployment then mines its own blocks with
   * `evm_mine` instead of waiting for the next interval. Default false (automine).
   */
  mineBlocks?: boolean;
}

interface PlannedContract {
  label: string;
  address: Address;
  salt: Hex;
  initCode: Hex;
  runtimeSize: number;
}

function plan(version: EntryPointVersion): {
  entryPoint: PlannedContract;
  factory: PlannedContract;
} {
  const canonical = CANONICAL_DEPLOYMENTS[version];
  const ep = loadArtifact(version, "EntryPoint");
  const factory = loadArtifact(version, "SimpleAccountFactory");
  const entryPoint = planContract(
    `EntryPoint v${version}`,
    canonical.entryPoint,
    canonical.entryPointSalt,
    ep.bytecode,
    size(ep.deployedBytecode),
  );
  // The factory's constructor takes the EntryPoint, so its init code (and hence its CREATE2
  // address) depends on the EntryPoint address.
  const factoryInitCode = concat([
    factory.bytecode,
    encodeAbiParameters([{ type: "address" }], [entryPoint.address]),
  ]);
  return {
    entryPoint,
    factory: planContract(
      `SimpleAccountFactory v${version}`,
      canonical.simpleAccountFactory,
      canonical.simpleAccountFactorySalt,
      factoryInitCode,
      size(factory.deployedBytecode),
    ),
  };
}

function planContract(
  label: string,
  canonical: Address,
  salt: Hex,
  initCode: Hex,
  runtimeSize: number,
): PlannedContract {
  const address = getContractAddress({
    opcode: "CREATE2",
    from: CREATE2_DEPLOYER,
    salt,
    bytecode: initCode,
  });
  if (!isAddressEqual(address, canonical)) {
    // The artifacts no longer reproduce the canonical address (e.g. a different contracts release
    // was installed). Fail loudly: callers rely on the canonical addresses.
    throw new Error(
      `${label}: CREATE2 address of the installed artifact is ${address}, not the canonical ` +
        `${canonical}; check the @account-abstraction/contracts version`,
    );
  }
  return { label, address, salt, initCode, runtimeSize };
}

/**
 * Deploys EntryPoint v0.6, v0.7 and v0.8 and their SimpleAccountFactory at their canonical
 * addresses, through the CREATE2 deployer that anvil pre-deploys. Contracts that already have code
 * are skipped, so it is safe to call on a node that has them. Verifies the code afterwards and
 * throws a descriptive error if anything is missing.
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

  const plans = ENTRY_POINT_VERSIONS.map((version) => ({ version, ...plan(version) }));

  const deployAll = async (contracts: PlannedContract[]): Promise<void> => {
    const codes = await Promise.all(
      contracts.map((c) => publicClient.getCode({ address: c.address })),
    );
    const missing = contracts.filter((_, i) => codes[i] === undefined || codes[i] === "0x");
    if (missing.length === 0) return;
    const firstNonce = await publicClient.getTransactionCount({
      address: account.address,
      blockTag: "pending",
    });
    // Explicit consecutive nonces let us send in parallel; anvil orders them by nonce.
    const hashes = await Promise.all(
      missing.map(
        (c, i): Promise<Hash> =>
          wallet.sendTransaction({
            to: CREATE2_DEPLOYER,
            data: concat([c.salt, c.initCode]),
            nonce: firstNonce + i,
          }),
      ),
    );
    if (options.mineBlocks) await testClient.mine({ blocks: 1 });
    const receipts = await Promise.all(
      hashes.map((hash) => publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })),
    );
    receipts.forEach((receipt, i) => {
      if (receipt.status !== "success") {
        throw new Error(`deploying ${missing[i]!.label} reverted (tx ${receipt.transactionHash})`);
      }
    });
  };

  // The factories' constructors talk to their EntryPoint (v0.8 reads `senderCreator()`), so all
  // EntryPoints must be mined before the factories are sent (and gas-estimated).
  await deployAll(plans.map((p) => p.entryPoint));
  await deployAll(plans.map((p) => p.factory));
  await verify(
    publicClient,
    plans.flatMap((p) => [p.entryPoint, p.factory]),
  );

  const result = {} as Record<EntryPointVersion, DevnetDeployment>;
  for (const p of plans) {
    result[p.version] = {
      version: p.version,
      entryPoint: p.entryPoint.address,
      simpleAccountFactory: p.factory.address,
    };
  }
  return result;
}

async function verify(client: PublicClient, contracts: PlannedContract[]): Promise<void> {
  const codes = await Promise.all(contracts.map((c) => client.getCode({ address: c.address })));
  const problems = contracts.flatMap((c, i) => {
    const code = codes[i];
    if (code === undefined || code === "0x") return [`${c.label}: no code at ${c.address}`];
    // Immutables change bytes but not the length, so the size identifies the contract.
    if (size(code) !== c.runtimeSize) {
      return [`${c.label}: code at ${c.address} is ${size(code)} bytes, expected ${c.runtimeSize}`];
    }
    return [];
  });
  if (problems.length > 0) {
    throw new Error(`ERC-4337 contract deployment failed:\n  ${problems.join("\n  ")}`);
  }
}
