/**
 * The accounts a bench drives and the operations they send: SimpleAccounts funded and deployed
 * on the devnet through the service, and operations signed before any clock starts.
 */
import type { Devnet, EntryPointVersion } from "@bundlekit/devnet";
import { toSimpleAccount } from "@bundlekit/devnet";
import {
  type Address,
  type Chain,
  concatHex,
  createWalletClient,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseEther,
  type PublicClient,
  stringToHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  type createBundlerClient,
  formatUserOperationRequest,
  getUserOperationHash,
  type SmartAccount,
  type UserOperation,
} from "viem/account-abstraction";
import { retryingBusy } from "./retry-busy.ts";

/** How many operations, from how many accounts, on which EntryPoint. */
export interface AccountOptions {
  ops: number;
  accounts: number;
  version: EntryPointVersion;
}

/** One operation of the run, signed: the `nonce`-th of account number `account`. */
export interface SignedOperation {
  account: number;
  nonce: bigint;
  hash: Hash;
  op: UserOperation;
}

const ACCOUNT_FUNDS = parseEther("1");
/** The most accounts deployed at once during setup, well under the factory's ERC-7562 throttling threshold. */
const DEPLOYMENT_WAVE = 50;

/** A viem bundler client talking to the service. */
export type BundlerClient = ReturnType<typeof createBundlerClient>;
type Gas = Pick<
  UserOperation,
  | "callGasLimit"
  | "verificationGasLimit"
  | "preVerificationGas"
  | "maxFeePerGas"
  | "maxPriorityFeePerGas"
>;

/**
 * M funded SimpleAccounts with deterministic owners, deployed before the clock starts by each
 * one's first operation (nonce 0, with the factory) through the service. Deployment goes through
 * the bundler because the v0.8 factory accepts calls only from the EntryPoint's SenderCreator, and
 * because an operation queued behind an undeployed account's first one cannot be simulated.
 */
export async function setUpAccounts(
  devnet: Devnet,
  client: PublicClient,
  bundler: BundlerClient,
  chain: Chain,
  options: AccountOptions,
) {
  const funder = createWalletClient({
    chain,
    transport: http(devnet.rpcUrl),
    account: privateKeyToAccount(devnet.accountKeys[0]!),
  });
  const owners = Array.from({ length: options.accounts }, (_, i) =>
    privateKeyToAccount(keccak256(stringToHex(`bundlekit bench owner ${i}`))),
  );
  const accounts = await Promise.all(
    owners.map((owner) => toSimpleAccount({ client, owner, version: options.version })),
  );

  let nonce = await client.getTransactionCount({
    address: funder.account.address,
    blockTag: "pending",
  });
  const funding: Hash[] = [];
  for (const account of accounts)
    funding.push(
      await funder.sendTransaction({
        to: account.address,
        value: ACCOUNT_FUNDS,
        nonce: nonce++,
        gas: 21_000n,
        chain,
      }),
    );
  for (const hash of funding) {
    if ((await client.waitForTransactionReceipt({ hash })).status !== "success")
      throw new Error(`funding transaction ${hash} reverted`);
  }

  // In waves: ERC-7562 throttles a factory whose operations are seen far faster than included,
  // and lets an unstaked one have 10 operations in the pool plus about one per inclusion
  // (UREP-020). What the service refuses for that (-32504), or while it is busy simulating others
  // (-32005), goes again in the next wave.
  const gas = await estimateOnce(bundler, accounts[0]!, 0n, options.version);
  let undeployed = [...accounts];
  while (undeployed.length > 0) {
    const wave = undeployed.slice(0, DEPLOYMENT_WAVE);
    const sent = await Promise.allSettled(
      wave.map(async (account) => {
        const { op } = await signedOperation(account, 0n, gas, devnet.chainId, options.version);
        // A wave may be more than the service's simulation caps take at once.
        return retryingBusy(
          () =>
            bundler.request({
              method: "eth_sendUserOperation",
              params: [formatUserOperationRequest(op), account.entryPoint.address],
            }),
          true,
          () => {},
        );
      }),
    );
    const refused = wave.filter((_, i) => {
      const result = sent[i]!;
      if (result.status === "fulfilled") return false;
      const { code } = result.reason as { code?: number };
      if (code === -32504 || code === -32005) return true;
      throw result.reason;
    });
    for (const result of sent) {
      if (result.status !== "fulfilled") continue;
      const receipt = await bundler.waitForUserOperationReceipt({
        hash: result.value,
        pollingInterval: 100,
        timeout: 120_000,
      });
      if (!receipt.success) throw new Error(`the deployment operation ${result.value} reverted`);
    }
    // The engine counts an inclusion once it follows the receipt: give it a block.
    if (refused.length > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    undeployed = [...refused, ...undeployed.slice(wave.length)];
  }
  return accounts;
}

/** An operation of `account` moving 1 wei to an address of its own, with the factory while undeployed (nonce 0). */
async function draftOperation(account: SmartAccount, nonce: bigint, version: EntryPointVersion) {
  const callData = await account.encodeCalls([
    { to: keccak256(account.address).slice(0, 42) as Address, value: 1n },
  ]);
  const { factory, factoryData } = nonce === 0n ? await account.getFactoryArgs() : {};
  return version === "0.6"
    ? {
        sender: account.address,
        nonce,
        initCode: factory ? concatHex([factory, factoryData!]) : "0x",
        callData,
        paymasterAndData: "0x" as Hex,
      }
    : { sender: account.address, nonce, ...(factory ? { factory, factoryData } : {}), callData };
}

/**
 * Gas limits and fees from one `eth_estimateUserOperationGas`, reused for every operation of the
 * same shape: all accounts are alike, so one estimate of the first account fits them all.
 */
async function estimateOnce(
  bundler: BundlerClient,
  account: SmartAccount,
  nonce: bigint,
  version: EntryPointVersion,
): Promise<Gas> {
  const gas = await estimateGas(bundler, account, nonce, version);
  // Twice the suggested fee: headroom should the base fee rise during the run.
  return { ...gas, maxFeePerGas: gas.maxFeePerGas * 2n };
}

/** `account`'s operation at `nonce` estimated by the service, as a wallet does, then signed with the estimate's figures. */
export async function estimateAndSign(
  bundler: BundlerClient,
  account: SmartAccount,
  nonce: bigint,
  chainId: number,
  version: EntryPointVersion,
) {
  const gas = await estimateGas(bundler, account, nonce, version);
  return signedOperation(account, nonce, gas, chainId, version);
}

/** Gas limits and fees of `account`'s operation at `nonce`, from one `eth_estimateUserOperationGas`. */
async function estimateGas(
  bundler: BundlerClient,
  account: SmartAccount,
  nonce: bigint,
  version: EntryPointVersion,
): Promise<Gas> {
  const stub = {
    ...(await draftOperation(account, nonce, version)),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    signature: await account.getStubSignature(),
  } as UserOperation;
  const estimate = (await bundler.request({
    method: "eth_estimateUserOperationGas",
    params: [formatUserOperationRequest(stub), account.entryPoint.address],
  })) as unknown as Record<string, Hex>;
  return {
    callGasLimit: BigInt(estimate.callGasLimit!),
    verificationGasLimit: BigInt(estimate.verificationGasLimit!),
    preVerificationGas: BigInt(estimate.preVerificationGas!),
    maxFeePerGas: BigInt(estimate.maxFeePerGas!),
    maxPriorityFeePerGas: BigInt(estimate.maxPriorityFeePerGas!),
  };
}

/** `account`'s operation at `nonce` with `gas`, signed, and its hash. */
async function signedOperation(
  account: SmartAccount,
  nonce: bigint,
  gas: Gas,
  chainId: number,
  version: EntryPointVersion,
) {
  const unsigned = {
    ...(await draftOperation(account, nonce, version)),
    ...gas,
    signature: "0x" as Hex,
  } as UserOperation;
  const op = {
    ...unsigned,
    signature: await account.signUserOperation({ ...(unsigned as object), chainId } as never),
  } as UserOperation;
  const hash = getUserOperationHash({
    userOperation: op,
    entryPointAddress: account.entryPoint.address,
    entryPointVersion: version,
    chainId,
  });
  return { op, hash };
}

/** Every timed operation (nonces 1, 2, … of each deployed account), signed before the clock starts. */
export async function prepareOperations(
  accounts: SmartAccount[],
  bundler: BundlerClient,
  chainId: number,
  options: AccountOptions,
) {
  const gas = await estimateOnce(bundler, accounts[0]!, 1n, options.version);
  const records: SignedOperation[] = [];
  for (const [index, account] of accounts.entries()) {
    const count =
      Math.floor(options.ops / options.accounts) + (index < options.ops % options.accounts ? 1 : 0);
    for (let nonce = 1n; nonce <= BigInt(count); nonce++) {
      records.push({
        account: index,
        nonce,
        ...(await signedOperation(account, nonce, gas, chainId, options.version)),
      });
    }
  }
  return records;
}
