import {
  type Devnet,
  deployGasWorkloads,
  type EntryPointVersion,
  gasWorkloadsAbi,
  SIMPLE_7702_ACCOUNT,
  startDevnet,
  toSimpleAccount,
  verifyingPaymasterData,
} from "@bundlekit/devnet";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { createSmartAccountClient } from "permissionless";
import {
  type Address,
  concat,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  http,
  numberToHex,
  parseAbi,
  parseEther,
  type PublicClient,
  slice,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, type SmartAccount, toSimple7702SmartAccount, type UserOperation } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];
const counterAbi = parseAbi(["function counter() view returns (uint256)"]);

/**
 * The clients users already have, unchanged, against the stand-alone service on the devnet:
 * viem's bundler client and permissionless's smart account client, with permissionless's
 * SimpleAccount on every EntryPoint version and its EIP-7702 Simple7702Account on v0.8. Every
 * operation goes out with the gas the service estimated.
 */
describe("viem and permissionless clients against the stand-alone service", () => {
  let devnet: Devnet;
  let service: BundlerService;
  let client: PublicClient;
  let workloads: Address;
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
    client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 100 }) as PublicClient;
    workloads = await deployGasWorkloads(devnet);
    batchOfTwo = [consume("0x1234"), consume("0x567890")];
  });

  afterAll(async () => {
    await service?.close();
    await devnet?.stop();
  });

  /** Send `value` to `to` from the devnet's funder, one transfer at a time. */
  async function fund(to: Address, value = parseEther("1")) {
    const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
    const sent = funding.then(async () => client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to, value }) }));
    funding = sent.catch(() => {});
    await sent;
  }

  /**
   * permissionless's SimpleAccount of a fresh owner on `version` (counterfactual), funded unless
   * told otherwise. permissionless 0.4 knows no v0.9 SimpleAccount: on v0.9 it is given the v0.9
   * EntryPoint and factory as a v0.8 account, which signs, encodes and sends exactly as v0.9 needs.
   */
  async function simpleAccount(version: EntryPointVersion, value = parseEther("1")): Promise<SmartAccount> {
    const { entryPoint, simpleAccountFactory } = devnet.deployments[version];
    const account = await toSimpleSmartAccount({
      client,
      owner: privateKeyToAccount(generatePrivateKey()),
      ...(version === "0.9"
        ? { entryPoint: { address: entryPoint, version: "0.8" as const }, factoryAddress: simpleAccountFactory }
        : { entryPoint: { address: entryPoint, version } }),
    });
    if (value > 0n) await fund(account.address, value);
    return account;
  }

  type Paymaster = NonNullable<Parameters<typeof createBundlerClient>[0]["paymaster"]>;
  /**
   * A client-side paymaster: the paymaster fields for estimation (`stub`) and for sending. They
   * leave the paymaster's gas limits out, so the client takes the service's estimate of them.
   */
  function sponsoredBy(stub: (op: UserOperation) => Promise<object>, final: (op: UserOperation) => Promise<object>): Paymaster {
    return { getPaymasterStubData: stub, getPaymasterData: final } as unknown as Paymaster;
  }

  function bundlerClient(account: SmartAccount, paymaster?: Paymaster) {
    return createBundlerClient({ account, client, transport: http(service.url), pollingInterval: 100, paymaster });
  }

  function smartAccountClient(account: SmartAccount) {
    return createSmartAccountClient({ account, chain: devnet.chain, client, bundlerTransport: http(service.url), pollingInterval: 100 });
  }

  const recipient = () => privateKeyToAccount(generatePrivateKey()).address;
  const counter = () => client.readContract({ address: workloads, abi: counterAbi, functionName: "counter" });
  /** Two calls whose effect shows in GasWorkloads' counter (+2, +3): v0.6's SimpleAccount batches calls without value. */
  const consume = (data: Hex) => ({ to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "consume", args: [data] }) });
  let batchOfTwo: { to: Address; data: Hex }[];

  describe.each(versions)("EntryPoint v%s", (version) => {
    it("viem's bundler client sends one call, then a batch", async () => {
      const account = await simpleAccount(version);
      const bundler = bundlerClient(account);
      const a = recipient();
      const before = await counter();
      const first = await bundler.sendUserOperation({ calls: [{ to: a, value: 1000n }] });
      expect((await bundler.waitForUserOperationReceipt({ hash: first, timeout: 30_000 })).success).toBe(true);
      expect(await client.getBalance({ address: a })).toBe(1000n);
      const batch = await bundler.sendUserOperation({ calls: batchOfTwo });
      expect((await bundler.waitForUserOperationReceipt({ hash: batch, timeout: 30_000 })).success).toBe(true);
      expect(await counter()).toBe(before + 5n);
    });

    it("permissionless's smart account client sends one call, then a batch", async () => {
      const account = await simpleAccount(version);
      const smart = smartAccountClient(account);
      const a = recipient();
      const before = await counter();
      const one = await smart.sendTransaction({ to: a, value: 5n });
      expect((await client.getTransactionReceipt({ hash: one })).status).toBe("success");
      expect(await client.getBalance({ address: a })).toBe(5n);
      const batch = await smart.sendTransaction({ calls: batchOfTwo });
      expect((await client.getTransactionReceipt({ hash: batch })).status).toBe("success");
      expect(await counter()).toBe(before + 5n);
    });

    it("a call that needs 400,000 gas forwarded succeeds on chain with the service's estimate", async () => {
      const account = await simpleAccount(version);
      const bundler = bundlerClient(account);
      const before = await client.readContract({ address: workloads, abi: counterAbi, functionName: "counter" });
      const data = encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "requireGas", args: [400_000n] });
      const hash = await bundler.sendUserOperation({ calls: [{ to: workloads, data }] });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt.success).toBe(true);
      expect(await client.readContract({ address: workloads, abi: counterAbi, functionName: "counter" })).toBe(before + 1n);
    });

    it("an operation sponsored by the devnet's verifying paymaster lands; the account pays nothing", async () => {
      // The v0.6 sample paymaster writes a per-sender nonce in its own storage: ERC-7562 (STO-022)
      // allows that only for a deployed account (or a staked factory), so v0.6 sponsors one deployed first.
      const account = await simpleAccount(version, version === "0.6" ? parseEther("1") : 0n);
      if (version === "0.6") {
        const own = bundlerClient(account);
        await own.waitForUserOperationReceipt({ hash: await own.sendUserOperation({ calls: [{ to: account.address, value: 0n }] }), timeout: 30_000 });
      }
      const balance = await client.getBalance({ address: account.address });
      const paymaster = devnet.deployments[version].paymasters.verifying;
      const timeRange = encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]);
      const stubSignature = await account.getStubSignature();
      const sponsor = async (userOperation: UserOperation, signed: boolean) => {
        const data = signed
          ? await verifyingPaymasterData({ client, version, paymaster, userOperation })
          : concat(version === "0.6" ? [paymaster, timeRange, stubSignature] : [timeRange, stubSignature]);
        return version === "0.6" ? { paymasterAndData: data } : { paymaster, paymasterData: data };
      };
      const bundler = bundlerClient(account, sponsoredBy((op) => sponsor(op, false), (op) => sponsor(op, true)));
      const hash = await bundler.sendUserOperation({ calls: [{ to: recipient(), value: 0n }] });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt.success).toBe(true);
      expect(receipt.paymaster).toBe(paymaster);
      expect(await client.getBalance({ address: account.address })).toBe(balance);
    });
  });

  it.each<EntryPointVersion>(["0.7", "0.8", "0.9"])("v%s: a paymaster whose postOp works by its context sponsors within the estimated postOp limit", async (version) => {
    const account = await simpleAccount(version, 0n);
    const paymaster = devnet.deployments[version].paymasters.postOpWork!;
    const paymasterData = numberToHex(2_000, { size: 4 });
    const sponsor = async () => ({ paymaster, paymasterData });
    const bundler = bundlerClient(account, sponsoredBy(sponsor, sponsor));
    const estimate = await bundler.estimateUserOperationGas({ calls: [{ to: recipient(), value: 0n }] });
    expect(estimate.paymasterPostOpGasLimit).toBeGreaterThan(2_000n * 30n);
    const hash = await bundler.sendUserOperation({ calls: [{ to: recipient(), value: 0n }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    expect(receipt.success).toBe(true);
  });

  describe("EIP-7702 on v0.9: viem's Simple7702Account with permissionless's client", () => {
    it("delegates the EOA to v0.9's Simple7702Account with its first operation, then sends a batch; receipts and lookups answer", async () => {
      const owner = privateKeyToAccount(generatePrivateKey());
      await fund(owner.address);
      const account = await toSimple7702SmartAccount({ client, owner, entryPoint: "0.9" });
      const delegate = devnet.deployments["0.9"].simple7702Account!;
      expect(account.entryPoint.address).toBe(devnet.deployments["0.9"].entryPoint);
      const authorization = await owner.signAuthorization({ contractAddress: delegate, chainId: devnet.chainId, nonce: await client.getTransactionCount({ address: owner.address }) });
      const smart = smartAccountClient(account);
      const [a, b] = [recipient(), recipient()];
      const first = await smart.sendTransaction({ to: a, value: 7n, authorization });
      expect((await client.getTransactionReceipt({ hash: first })).status).toBe("success");
      expect(await client.getCode({ address: owner.address })).toBe(concat(["0xef0100", delegate]).toLowerCase());
      const bundler = bundlerClient(account);
      const hash = await bundler.sendUserOperation({ calls: [{ to: a, value: 1n }, { to: b, value: 2n }] });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt).toMatchObject({ success: true, sender: owner.address });
      expect(getAddress(receipt.entryPoint)).toBe(devnet.deployments["0.9"].entryPoint);
      expect(await client.getBalance({ address: a })).toBe(8n);
      expect(await client.getBalance({ address: b })).toBe(2n);
      expect((await bundler.getUserOperation({ hash })).entryPoint).toBe(devnet.deployments["0.9"].entryPoint);
    });

    it("a v0.9 operation whose paymaster signs after the account (paymasterSignature) lands, sponsored; lookups give it back as sent", async () => {
      // The devnet's own v0.9 SimpleAccount (viem's account type carries paymasterSignature for v0.9).
      const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version: "0.9" });
      const paymaster = devnet.deployments["0.9"].paymasters.verifying;
      const timeRange = encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]);
      const bundler = bundlerClient(account);
      // Estimated with a stub of the signature's final length, which preVerificationGas then pays for.
      const prepared = await bundler.prepareUserOperation({
        calls: [{ to: recipient(), value: 0n }],
        paymaster,
        paymasterData: timeRange,
        paymasterSignature: "0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c",
      });
      // The account signs first, over everything but the paymaster's signature ...
      const unsigned = prepared as UserOperation<"0.9">;
      const signed = { ...unsigned, signature: await account.signUserOperation(unsigned as UserOperation) };
      // ... then the paymaster signs, and its signature travels apart from paymasterData.
      const paymasterSignature = slice(await verifyingPaymasterData({ client, version: "0.9", paymaster, userOperation: signed as UserOperation }), 64);
      const hash = await bundler.sendUserOperation({ ...signed, paymasterSignature } as never);
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt).toMatchObject({ success: true, paymaster, sender: account.address });
      expect(await client.getBalance({ address: account.address })).toBe(0n);
      const lookup = (await bundler.getUserOperation({ hash })).userOperation as { paymasterSignature?: Hex; paymasterData?: Hex };
      expect(lookup).toMatchObject({ paymasterSignature, paymasterData: timeRange });
    });
  });

  describe("EIP-7702: permissionless's Simple7702Account on v0.8", () => {
    /** permissionless's 7702 account of a fresh, funded EOA, and the EOA's signed delegation to Simple7702Account. */
    async function account7702() {
      const owner = privateKeyToAccount(generatePrivateKey());
      await fund(owner.address);
      const account = await toSimpleSmartAccount({
        client,
        owner,
        eip7702: true,
        entryPoint: { address: devnet.deployments["0.8"].entryPoint, version: "0.8" },
      });
      const authorization = await owner.signAuthorization({
        contractAddress: SIMPLE_7702_ACCOUNT,
        chainId: devnet.chainId,
        nonce: await client.getTransactionCount({ address: owner.address }),
      });
      return { account, eoa: owner.address, authorization };
    }

    it("permissionless's client delegates the EOA with its first operation, then sends a batch", async () => {
      const { account, eoa, authorization } = await account7702();
      expect(account.address).toBe(eoa);
      const smart = smartAccountClient(account);
      const [a, b] = [recipient(), recipient()];
      const first = await smart.sendTransaction({ to: a, value: 7n, authorization });
      expect((await client.getTransactionReceipt({ hash: first })).status).toBe("success");
      expect(await client.getCode({ address: eoa })).toBe(concat(["0xef0100", SIMPLE_7702_ACCOUNT]).toLowerCase());
      // Delegated now: the client sends no authorization any more.
      const batch = await smart.sendTransaction({ calls: [{ to: a, value: 1n }, { to: b, value: 2n }] });
      expect((await client.getTransactionReceipt({ hash: batch })).status).toBe("success");
      expect(await client.getBalance({ address: a })).toBe(8n);
      expect(await client.getBalance({ address: b })).toBe(2n);
    });

    it("an authorization the EOA did not sign (the client's estimation stub) is refused with -32602, not dropped later", async () => {
      const { account } = await account7702();
      const bundler = bundlerClient(account);
      const error = await bundler.sendUserOperation({ calls: [{ to: recipient(), value: 1n }] }).then(
        () => undefined,
        (e: unknown) => e as { details?: string; walk: (fn: (e: unknown) => boolean) => { code?: number } | null },
      );
      expect(error?.walk((e) => (e as { code?: number }).code === -32602)?.code).toBe(-32602);
      expect(error?.details).toMatch(/eip7702Auth: is signed by 0x[0-9a-fA-F]{40}, not by the sender/);
    });

    it("viem's bundler client sends a 7702 operation with its authorization, estimated by the service", async () => {
      const { account, eoa, authorization } = await account7702();
      const bundler = bundlerClient(account);
      const data = encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "requireGas", args: [400_000n] });
      const hash = await bundler.sendUserOperation({ calls: [{ to: workloads, data }, { to: recipient(), value: 1n }], authorization });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt.success).toBe(true);
      expect(receipt.sender).toBe(eoa);
      const lookup = await bundler.getUserOperation({ hash });
      // The wire form (viem passes eip7702Auth through as the service sent it).
      const auth = (lookup.userOperation as { eip7702Auth?: { address: Hex } }).eip7702Auth;
      expect(auth?.address.toLowerCase()).toBe(SIMPLE_7702_ACCOUNT.toLowerCase());
    });
  });
});
