import { type Devnet, type EntryPointVersion, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createPublicClient, createWalletClient, http, parseEther, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, getUserOperationHash } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mempoolPolicyNames } from "@bundlekit/core";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";

/** A user operation from viem's bundler client through the stand-alone service to anvil and back, with each shipped mempool policy. */
describe.each(mempoolPolicyNames)("stand-alone service end to end, mempool policy %s", (mempoolPolicy) => {
  let devnet: Devnet;
  let service: BundlerService;
  let publicClient: PublicClient;
  let chain: Devnet["chain"];

  beforeAll(async () => {
    devnet = await startDevnet();
    const config = loadConfig({ BUNDLEKIT_RPC_URL: devnet.rpcUrl, BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","), BUNDLEKIT_PORT: "0", BUNDLEKIT_DATABASE: ":memory:", BUNDLEKIT_BUNDLE_INTERVAL: "100", BUNDLEKIT_MEMPOOL_POLICY: mempoolPolicy });
    expect(config.mempoolPolicy).toBe(mempoolPolicy);
    service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl });
    chain = devnet.chain;
    publicClient = createPublicClient({ chain, transport: http(devnet.rpcUrl), pollingInterval: 100 }) as PublicClient;
  });

  afterAll(async () => {
    await service?.close();
    await devnet?.stop();
  });

  it.each<[EntryPointVersion, number]>([
    ["0.6", 0],
    ["0.7", 1],
    ["0.8", 2],
  ])("sends ETH from a counterfactual SimpleAccount on EntryPoint v%s", async (version, keyIndex) => {
    const owner = privateKeyToAccount(devnet.accountKeys[keyIndex]!);
    const account = await toSimpleAccount({ client: publicClient, owner, version });
    const funder = createWalletClient({ chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys[9]!) });
    await publicClient.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1"), chain }) });
    expect(await publicClient.getCode({ address: account.address })).toBeUndefined();

    const bundlerClient = createBundlerClient({ account, client: publicClient, transport: http(service.url), pollingInterval: 100 });
    const recipient = privateKeyToAccount(devnet.accountKeys[10 + keyIndex]!).address;
    const before = await publicClient.getBalance({ address: recipient });
    const calls = [{ to: recipient, value: parseEther("0.01") }];

    const estimate = await bundlerClient.estimateUserOperationGas({ calls });
    expect(estimate.callGasLimit).toBeGreaterThan(0n);
    expect(estimate.verificationGasLimit).toBeGreaterThan(100_000n); // includes deploying the account

    const prepared = await bundlerClient.prepareUserOperation({ calls });
    const signature = await account.signUserOperation(prepared as never);
    const userOpHash = await bundlerClient.sendUserOperation({ ...prepared, signature } as never);
    expect(userOpHash).toBe(
      getUserOperationHash({
        userOperation: { ...prepared, signature } as never,
        entryPointAddress: account.entryPoint.address,
        entryPointVersion: version,
        chainId: devnet.chainId,
      }),
    );

    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash: userOpHash, timeout: 30_000 });
    expect(receipt.success).toBe(true);
    expect(receipt.userOpHash).toBe(userOpHash);
    expect(receipt.sender).toBe(account.address);
    expect(await publicClient.getBalance({ address: recipient })).toBe(before + parseEther("0.01"));
    expect(await publicClient.getCode({ address: account.address })).toMatch(/^0x[0-9a-f]+$/);

    const lookup = await bundlerClient.getUserOperation({ hash: userOpHash });
    expect(lookup.transactionHash).toBe(receipt.receipt.transactionHash);
    expect(lookup.userOperation.sender).toBe(account.address);
  });
});
