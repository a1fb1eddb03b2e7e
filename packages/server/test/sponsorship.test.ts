import { type Devnet, deployGasWorkloads, type EntryPointVersion, gasWorkloadsAbi, verifyingPaymasterData } from "@bundlekit/devnet";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, type BaseError, concat, createWalletClient, encodeAbiParameters, encodeFunctionData, type Hash, type Hex, http, parseAbi, parseEther, parseGwei, type PublicClient, RpcRequestError } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  createBundlerClient,
  formatUserOperationRequest,
  getUserOperationHash,
  type SmartAccount,
  toPackedUserOperation,
  type UserOperation,
  UserOperationExecutionError,
} from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];
const depositAbi = parseAbi(["function balanceOf(address) view returns (uint256)"]);
const handleOpsAbi = {
  "0.6": parseAbi([
    "struct UserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; uint256 callGasLimit; uint256 verificationGasLimit; uint256 preVerificationGas; uint256 maxFeePerGas; uint256 maxPriorityFeePerGas; bytes paymasterAndData; bytes signature; }",
    "function handleOps(UserOperation[] ops, address beneficiary)",
  ]),
  packed: parseAbi([
    "struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }",
    "function handleOps(PackedUserOperation[] ops, address beneficiary)",
  ]),
};

type RpcAnswer = { result?: unknown; error?: { code: number; message: string; data?: Record<string, unknown> } };

/**
 * Every path of a sponsored operation through the stand-alone service, on each EntryPoint
 * version, with the devnet's verifying paymaster (signed by the devnet key, or by another to make
 * a bad signature) and no whitelisting: refusals with the paymaster's codes, who reputation blames,
 * the paymaster's deposit, and a sponsored call that reverts. Bundling is manual here, so each
 * test decides when a bundle is built.
 */
describe("sponsored operations: every paymaster path", () => {
  let fx: ServiceFixture;
  let devnet: Devnet;
  let client: PublicClient;
  let workloads: Address;
  let funding: Promise<unknown> = Promise.resolve();

  beforeAll(async () => {
    fx = await serviceFixture({ debugMethods: true });
    ({ devnet, client } = fx);
    workloads = await deployGasWorkloads(devnet);
  });
  afterAll(() => fx?.close());

  const rpc = (method: string, params: unknown[]): Promise<RpcAnswer> => fx.call(method, params);

  async function fund(to: Address, value = parseEther("1")) {
    const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
    const sent = funding.then(async () => client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to, value }) }));
    funding = sent.catch(() => {});
    await sent;
  }

  /** Send `op` to the service as a client would, and build a bundle with it. */
  async function sendAndBundle(op: UserOperation, entryPoint: Address): Promise<Hash> {
    const sent = await rpc("eth_sendUserOperation", [formatUserOperationRequest(op), entryPoint]);
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect((await rpc("debug_bundler_sendBundleNow", [])).error).toBeUndefined();
    return sent.result as Hash;
  }

  describe.each(versions)("EntryPoint v%s", (version) => {
    const entryPoint = () => devnet.deployments[version].entryPoint;
    const paymaster = () => devnet.deployments[version].paymasters.verifying;
    const deposit = () => client.readContract({ address: entryPoint(), abi: depositAbi, functionName: "balanceOf", args: [paymaster()] });
    const reputationOf = async (address: Address) => {
      const { result } = await rpc("debug_bundler_dumpReputation", [entryPoint()]);
      const entry = (result as { address: string; opsSeen: Hex; status: Hex }[]).find((e) => e.address.toLowerCase() === address.toLowerCase());
      return { opsSeen: BigInt(entry?.opsSeen ?? 0), status: BigInt(entry?.status ?? 0) };
    };

    /**
     * permissionless's SimpleAccount of a fresh owner, funded and deployed by an operation it pays
     * for itself. permissionless 0.4 knows no v0.9 SimpleAccount: on v0.9 it is given the v0.9
     * EntryPoint and factory as a v0.8 account, which signs and encodes exactly as v0.9 needs.
     */
    async function deployedAccount(): Promise<SmartAccount> {
      const account = await toSimpleSmartAccount({
        client,
        owner: privateKeyToAccount(generatePrivateKey()),
        ...(version === "0.9"
          ? { entryPoint: { address: entryPoint(), version: "0.8" as const }, factoryAddress: devnet.deployments["0.9"].simpleAccountFactory }
          : { entryPoint: { address: entryPoint(), version } }),
      });
      await fund(account.address);
      const bundler = createBundlerClient({ account, client, transport: http(fx.service.url) });
      const prepared = await bundler.prepareUserOperation({ calls: [{ to: account.address, value: 0n }] });
      const op = { ...prepared, signature: await account.signUserOperation(prepared as never) } as UserOperation;
      await sendAndBundle(op, entryPoint());
      expect(await client.getCode({ address: account.address })).toBeDefined();
      return account;
    }

    /**
     * A signed operation of `account` making `calls`, sponsored by the verifying paymaster: gas
     * from the service's estimate unless `gas` overrides it, the paymaster's signature by
     * `signerKey` (default: the devnet's paymaster key) valid until `validUntil`.
     */
    async function sponsored(
      account: SmartAccount,
      calls: { to: Address; value?: bigint; data?: Hex }[],
      options: { signerKey?: Hex; validUntil?: number; gas?: Partial<UserOperation>; nonce?: bigint } = {},
    ): Promise<UserOperation> {
      const timeRange = encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [options.validUntil ?? 0, 0]);
      const stub = concat([timeRange, await account.getStubSignature()]);
      const stubFields = version === "0.6" ? { paymasterAndData: concat([paymaster(), stub]) } : { paymaster: paymaster(), paymasterData: stub };
      const bundler = createBundlerClient({ account, client, transport: http(fx.service.url) });
      const prepared = await bundler.prepareUserOperation({ calls: [{ to: account.address, value: 0n }], ...stubFields, ...(options.nonce === undefined ? {} : { nonce: options.nonce }) } as never);
      const op = { ...(prepared as object), callData: await account.encodeCalls(calls), ...(options.gas as object) } as UserOperation;
      const data = await verifyingPaymasterData({ client, version, paymaster: paymaster(), userOperation: op as never, signerKey: options.signerKey, validUntil: options.validUntil });
      const signedByPaymaster = (version === "0.6" ? { ...op, paymasterAndData: data } : { ...op, paymasterData: data }) as UserOperation;
      return { ...signedByPaymaster, signature: await account.signUserOperation(signedByPaymaster as never) } as UserOperation;
    }

    it("a paymaster signature by another key is refused with -32507 (ERC-7769's signature code), AA34 and the paymaster named: viem's paymaster-signature error", async () => {
      const account = await deployedAccount();
      const op = await sponsored(account, [{ to: account.address, value: 0n }], { signerKey: generatePrivateKey() });
      const bundler = createBundlerClient({ account, client, transport: http(fx.service.url) });
      const error = await bundler.sendUserOperation(op as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UserOperationExecutionError);
      expect((error as BaseError).cause).toMatchObject({ name: "UserOperationPaymasterSignatureError" });
      const answer = (error as BaseError).walk((e) => e instanceof RpcRequestError) as RpcRequestError;
      expect(answer.code).toBe(-32507);
      expect(answer.details).toBe("AA34 signature error");
      const data = answer.data as { reason: string; paymaster: Address };
      expect(data.reason).toBe("AA34 signature error");
      expect(data.paymaster.toLowerCase()).toBe(paymaster().toLowerCase());
    });

    it("a sponsored call that reverts is included with success false, and the paymaster pays for it", async () => {
      const account = await deployedAccount();
      const balance = await client.getBalance({ address: account.address });
      const fail = { to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "fail", args: ["sponsored, still failing"] }) };
      // Estimation answers -32521 for a call that reverts: the client sets the call's gas itself.
      const op = await sponsored(account, [fail], { gas: { callGasLimit: 100_000n } });
      const before = await deposit();
      const hash = await sendAndBundle(op, entryPoint());
      const { result: receipt } = (await rpc("eth_getUserOperationReceipt", [hash])) as { result: { success: boolean; actualGasCost: Hex; reason?: string; paymaster: Address } };
      expect(receipt.success).toBe(false);
      expect(receipt.reason).toBe("sponsored, still failing");
      expect(receipt.paymaster.toLowerCase()).toBe(paymaster().toLowerCase());
      expect(await deposit()).toBe(before - BigInt(receipt.actualGasCost));
      expect(await client.getBalance({ address: account.address })).toBe(balance);
    });

    it("a paymaster whose deposit cannot cover its pending operations is refused with -32508", async () => {
      const [first, second] = [await deployedAccount(), await deployedAccount()];
      const available = await deposit();
      // Fees at which one operation may cost 60% of the deposit: the first fits, the second does not.
      const probe = await sponsored(first, [{ to: first.address, value: 0n }]);
      const gas = probe.callGasLimit + probe.preVerificationGas + probe.verificationGasLimit * (version === "0.6" ? 3n : 1n) + (probe.paymasterVerificationGasLimit ?? 0n) + (probe.paymasterPostOpGasLimit ?? 0n);
      const fees = { maxFeePerGas: (available * 6n) / 10n / gas, maxPriorityFeePerGas: parseGwei("1") };
      try {
        const accepted = await rpc("eth_sendUserOperation", [formatUserOperationRequest(await sponsored(first, [{ to: first.address, value: 0n }], { gas: fees })), entryPoint()]);
        expect(accepted.error).toBeUndefined();
        const { error } = await rpc("eth_sendUserOperation", [formatUserOperationRequest(await sponsored(second, [{ to: second.address, value: 0n }], { gas: fees })), entryPoint()]);
        expect(error?.code).toBe(-32508);
        expect(error?.message).toMatch(new RegExp(`^AA31 paymaster deposit too low: paymaster ${paymaster()} deposit of ${available} wei cannot cover its 1 operation in the mempool and this one`, "i"));
        expect(error?.data?.paymaster).toBe(paymaster());
      } finally {
        // The pooled operation would hold most of the deposit for the other tests.
        await rpc("debug_bundler_clearMempool", []);
      }
    });

    it("an account's failure at bundle time is not counted against its paymaster (EREP-015)", async () => {
      const account = await deployedAccount();
      const seenBefore = (await reputationOf(paymaster())).opsSeen;
      const op = await sponsored(account, [{ to: account.address, value: 0n }]);
      expect((await rpc("eth_sendUserOperation", [formatUserOperationRequest(op), entryPoint()])).error).toBeUndefined();
      expect((await reputationOf(paymaster())).opsSeen).toBe(seenBefore + 1n);
      // Another bundler includes a different operation of the account at the same nonce: the pooled one now fails as the account's (AA25).
      const other = await sponsored(account, [{ to: account.address, value: 1n }], { nonce: op.nonce });
      const wallet = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-3)!) });
      const struct = version === "0.6" ? other : toPackedUserOperation(other);
      const abi = version === "0.6" ? handleOpsAbi["0.6"] : handleOpsAbi.packed;
      await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: entryPoint(), abi, functionName: "handleOps", args: [[struct as never], wallet.account.address] }) });
      expect((await rpc("debug_bundler_sendBundleNow", [])).error).toBeUndefined();
      const hash = getUserOperationHash({ userOperation: op, entryPointAddress: entryPoint(), entryPointVersion: version, chainId: devnet.chainId });
      const { result } = (await rpc("eth_getUserOperationByHash", [hash])) as { result: unknown };
      expect(result).toBeNull();
      expect((await reputationOf(paymaster())).opsSeen).toBe(seenBefore);
    });

    it("a paymaster that fails a bundle after passing validation is banned, and then refused with -32504", async () => {
      const account = await deployedAccount();
      const now = Number((await client.getBlock()).timestamp);
      // Valid for 45 s: long enough to be admitted, expired once the chain moves on two minutes.
      const op = await sponsored(account, [{ to: account.address, value: 0n }], { validUntil: now + 45 });
      try {
        expect((await rpc("eth_sendUserOperation", [formatUserOperationRequest(op), entryPoint()])).error).toBeUndefined();
        await client.request({ method: "evm_increaseTime" as never, params: [120] as never });
        await client.request({ method: "evm_mine" as never, params: [] as never });
        expect((await rpc("debug_bundler_sendBundleNow", [])).error).toBeUndefined();
        expect((await reputationOf(paymaster())).status).toBe(2n);
        const next = await sponsored(await deployedAccount(), [{ to: account.address, value: 0n }]);
        const { error } = await rpc("eth_sendUserOperation", [formatUserOperationRequest(next), entryPoint()]);
        expect(error?.code).toBe(-32504);
        expect(error?.message).toBe(`paymaster ${paymaster()} is banned`);
      } finally {
        // Banned, the shared paymaster would refuse every other test's operations.
        await rpc("debug_bundler_clearReputation", []);
      }
    });
  });
});
