import {
  type Address,
  concat,
  encodeFunctionData,
  type Hex,
  keccak256,
  parseAbi,
  parseEther,
  type SignedAuthorization,
  toHex,
} from "viem";
import { getUserOperationHash } from "viem/account-abstraction";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { type Admission, canonicalEntryPoints, type EntryPointVersion, type NewMempoolEntry, type UserOperation } from "@bundlekit/core";

/**
 * Realistic mempool entries for store tests: real account addresses, real EntryPoint addresses,
 * the userOpHash the EntryPoint would compute, and numbers wide enough to catch lossy storage.
 */

/** The chain the fixtures' hashes and authorizations are for (Sepolia). */
export const fixtureChainId = 11155111;

const accounts = new Map<number, PrivateKeyAccount>();

/** The `index`-th test account (a deterministic key), so tests can name distinct senders by number. */
export function fixtureAccount(index: number): PrivateKeyAccount {
  let account = accounts.get(index);
  if (!account) {
    account = privateKeyToAccount(keccak256(toHex(`bundlekit fixture account ${index}`)));
    accounts.set(index, account);
  }
  return account;
}

/** The factory and the paymaster that fixture operations name (v0.6 always, later versions when `sponsored`). */
export const fixtureFactory: Address = "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985";
export const fixturePaymaster: Address = "0x0000000000325602a77416A16136FDafd04b299f";
const factory = fixtureFactory;
const paymaster = fixturePaymaster;
const delegation: Address = "0xe6Cae83BdE06E4c305530e199D7217f42808555B";
const recipient: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const abi = parseAbi([
  "function execute(address dest, uint256 value, bytes func)",
  "function createAccount(address owner, uint256 salt) returns (address)",
]);
// A 65-byte ECDSA signature's shape; stores never check it.
const signature: Hex = `0x${"5c".repeat(32)}${"3e".repeat(32)}1b`;

export interface FixtureEntryOptions {
  /** Default "0.7". */
  version?: EntryPointVersion;
  /** Default the canonical EntryPoint of `version`. */
  entryPoint?: Address;
  /** Index of the sender account (see `fixtureAccount`). Default 0. */
  sender?: number;
  /** Default 0. */
  nonce?: bigint;
  /** Default 1_750_000_000_000. */
  receivedAt?: number;
  /** Bump to make a replacement of the same sender and nonce. Default 0. */
  feeBump?: bigint;
  /** Another operation with the same sender, nonce and fees: a call that sends this many wei more. Default 0. */
  variant?: number;
  /**
   * v0.7+: deploy the sender with a factory and pay with a paymaster (on v0.9 whose signature
   * travels as `paymasterSignature`). Default false.
   */
  sponsored?: boolean;
  /**
   * An EIP-7702 account with a signed authorization: on v0.8+ with `factory` 0x7702, on v0.6 and
   * v0.7 (whose EntryPoints know no marker) with no factory and no paymaster. Default false.
   */
  eip7702?: boolean;
}

/** A mempool entry as the engine would hand it to `MempoolStore.admit`. */
export async function fixtureEntry(options: FixtureEntryOptions = {}): Promise<NewMempoolEntry> {
  const version = options.version ?? "0.7";
  const entryPoint = options.entryPoint ?? canonicalEntryPoints[version];
  const userOperation = await fixtureUserOperation(version, options);
  return {
    userOpHash: getUserOperationHash({
      userOperation,
      entryPointAddress: entryPoint,
      entryPointVersion: version,
      chainId: fixtureChainId,
    }),
    entryPoint,
    entryPointVersion: version,
    userOperation,
    receivedAt: options.receivedAt ?? 1_750_000_000_000,
  };
}

async function fixtureUserOperation(
  version: EntryPointVersion,
  options: FixtureEntryOptions,
): Promise<UserOperation> {
  const account = fixtureAccount(options.sender ?? 0);
  const bump = options.feeBump ?? 0n;
  const common = {
    sender: account.address,
    nonce: options.nonce ?? 0n,
    callData: encodeFunctionData({
      abi,
      functionName: "execute",
      args: [recipient, parseEther("0.01") + BigInt(options.variant ?? 0), "0x"],
    }),
    callGasLimit: 85_000n,
    verificationGasLimit: 1_250_000n,
    preVerificationGas: 48_193n,
    maxFeePerGas: 31_000_000_017n + bump,
    maxPriorityFeePerGas: 1_500_000_000n + bump,
    signature,
  };
  const factoryData = encodeFunctionData({
    abi,
    functionName: "createAccount",
    args: [account.address, 7n],
  });
  if ((version === "0.6" || version === "0.7") && options.eip7702) {
    const delegated = { ...common, authorization: await authorize(account) };
    return version === "0.6" ? { ...delegated, initCode: "0x", paymasterAndData: "0x" } : delegated;
  }
  if (version === "0.6") {
    return {
      ...common,
      initCode: concat([factory, factoryData]).toLowerCase() as Hex,
      paymasterAndData: concat([paymaster, `0x${"00".repeat(28)}deadbeef`]).toLowerCase() as Hex,
    };
  }
  if (version !== "0.7" && options.eip7702) {
    return {
      ...common,
      factory: "0x7702" as Address,
      factoryData: "0x",
      authorization: await authorize(account),
    };
  }
  if (!options.sponsored) return common;
  const paymasterSignature: Hex = `0x${"ab".repeat(65)}`;
  const sponsored = {
    ...common,
    factory,
    factoryData,
    paymaster,
    paymasterVerificationGasLimit: 70_000n,
    // Past 2^53, so a lossy number conversion shows.
    paymasterPostOpGasLimit: 2n ** 64n + 50_000n,
    paymasterData: `0x${"00".repeat(12)}66a3c1ff` as Hex,
  };
  // v0.9: the paymaster's signature travels apart from its data, as paymasterSignature.
  return version === "0.9"
    ? { ...sponsored, paymasterSignature }
    : { ...sponsored, paymasterData: concat([sponsored.paymasterData, paymasterSignature]) };
}

async function authorize(account: PrivateKeyAccount): Promise<SignedAuthorization> {
  const { address, chainId, nonce, r, s, yParity } = await account.signAuthorization({
    address: delegation,
    chainId: fixtureChainId,
    nonce: 12,
  });
  // The wire form (ERC-7769 `eip7702Auth`) carries yParity, not `v`, so only these survive storage.
  return { address, chainId, nonce, r, s, yParity: yParity ?? 0 };
}

/** A decision for `MempoolStore.admit` that replaces nothing: stores the entry as it is. */
export const replacingNothing = (): Admission => ({ replaces: undefined });
