import { type Devnet, SIMPLE_7702_ACCOUNT, startDevnet } from "@bundlekit/devnet";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  getContractAddress,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  parseEther,
} from "viem";
import {
  createBundlerClient,
  type SmartAccount,
  toSimple7702SmartAccount,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";

/** A frame of a `callTracer` trace. */
interface Frame {
  from: Address;
  to?: Address;
  input: Hex;
  calls?: Frame[];
}

/**
 * EIP-7702 accounts against the stand-alone service, with viem's and permissionless's clients:
 * the authorization rides in the bundle transaction's authorization list.
 */
describe("EIP-7702 operations through the stand-alone service", () => {
  let devnet: Devnet;
  let service: BundlerService;
  let client: PublicClient;
  let funding: Promise<unknown> = Promise.resolve();

  beforeAll(async () => {
    devnet = await startDevnet();
    const config = loadConfig({
      BUNDLEKIT_RPC_URL: devnet.rpcUrl,
      BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
      BUNDLEKIT_PORT: "0",
      BUNDLEKIT_DATABASE: ":memory:",
      BUNDLEKIT_BUNDLE_INTERVAL: "100",
    });
    service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl });
    client = createPublicClient({
      chain: devnet.chain,
      transport: http(devnet.rpcUrl),
      pollingInterval: 100,
    }) as PublicClient;
  });

  afterAll(async () => {
    await service?.close();
    await devnet?.stop();
  });

  /** A fresh EOA, funded from the devnet's funder (one transfer at a time). */
  async function fundedOwner() {
    const owner = privateKeyToAccount(generatePrivateKey());
    const funder = createWalletClient({
      chain: devnet.chain,
      transport: http(devnet.rpcUrl),
      account: privateKeyToAccount(devnet.accountKeys.at(-1)!),
    });
    const sent = funding.then(async () =>
      client.waitForTransactionReceipt({
        hash: await funder.sendTransaction({ to: owner.address, value: parseEther("1") }),
      }),
    );
    funding = sent.catch(() => {});
    await sent;
    return owner;
  }

  function bundlerClient(account: SmartAccount) {
    return createBundlerClient({
      account,
      client,
      transport: http(service.url),
      pollingInterval: 100,
    });
  }

  /** Every frame of a call trace, depth first. */
  function framesOf(frame: Frame): Frame[] {
    return [frame, ...(frame.calls ?? []).flatMap(framesOf)];
  }

  const recipient = () => privateKeyToAccount(generatePrivateKey()).address;

  it("v0.8, the short-form factory 0x7702 with factoryData: estimated, sent and included; the EntryPoint's SenderCreator calls the EOA with the data", async () => {
    const owner = await fundedOwner();
    const account = await toSimple7702SmartAccount({ client, owner });
    const authorization = await owner.signAuthorization({
      contractAddress: SIMPLE_7702_ACCOUNT,
      chainId: devnet.chainId,
      nonce: await client.getTransactionCount({ address: owner.address }),
    });
    // Any call Simple7702Account's fallback accepts: the EntryPoint makes it once the EOA is delegated, before validation.
    const factoryData: Hex = "0x1234abcd";
    const bundler = bundlerClient(account);
    const to = recipient();
    const hash = await bundler.sendUserOperation({
      calls: [{ to, value: 7n }],
      authorization,
      factory: "0x7702",
      factoryData,
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    expect(receipt.success).toBe(true);
    expect(await client.getBalance({ address: to })).toBe(7n);
    expect(await client.getCode({ address: owner.address })).toBe(
      `0xef0100${SIMPLE_7702_ACCOUNT.slice(2).toLowerCase()}`,
    );
    // The init call of the 20-byte marker's initCode: SenderCreator (the EntryPoint's first CREATE) → the EOA, with factoryData.
    const senderCreator = getContractAddress({
      from: devnet.deployments["0.8"].entryPoint,
      nonce: 1n,
    });
    const trace = await client.request<{
      Method: "debug_traceTransaction";
      Parameters: [Hex, { tracer: "callTracer" }];
      ReturnType: Frame;
    }>({
      method: "debug_traceTransaction",
      params: [receipt.receipt.transactionHash, { tracer: "callTracer" }],
    });
    const initCalls = framesOf(trace).filter(
      (f) => isAddressEqual(f.from, senderCreator) && f.to && isAddressEqual(f.to, owner.address),
    );
    expect(initCalls.map((f) => f.input)).toEqual([factoryData]);
  });
});
