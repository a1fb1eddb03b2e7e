import type { EntryPointVersion } from "@bundlekit/devnet";
import { type Address, concat, createWalletClient, encodeFunctionData, getAddress, type Hex, http, keccak256, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPoint06Abi, entryPoint07Abi, entryPoint08Abi, entryPoint09Abi, type SmartAccount } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { toEntryPointStruct } from "../src/userop/pack.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { engineFixture, rejection, unestimatedGas } from "./fixtures.ts";

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];
const abis = { "0.6": entryPoint06Abi, "0.7": entryPoint07Abi, "0.8": entryPoint08Abi, "0.9": entryPoint09Abi } as const;

/**
 * A new account's operations queued behind the one that deploys it (issue 21, finding 2): one
 * that carries the factory again is refused with the EntryPoint's AA10, and an AA10 in a bundle
 * never counts against the factory, which every new account on it depends on.
 */
describe("operations queued behind a new account's deployment", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  /** A funded counterfactual SimpleAccount, with its factory call (viem gives none once it is deployed). */
  async function newAccount(version: EntryPointVersion) {
    const account = await fx.makeAccount(version);
    const { factory, factoryData } = (await account.getFactoryArgs()) as { factory: Address; factoryData: Hex };
    const fields = version === "0.6" ? { initCode: concat([factory, factoryData]) } : { factory, factoryData };
    return { account, entryPoint: account.entryPoint.address, factory: getAddress(factory), factoryData, fields };
  }
  const noFactory = (version: EntryPointVersion) => (version === "0.6" ? { initCode: "0x" as const } : { factory: undefined, factoryData: undefined });
  const sign = async (account: SmartAccount, op: UserOperation) =>
    ({ ...op, signature: await account.signUserOperation({ ...(op as object), chainId: fx.devnet.chainId } as never) }) as UserOperation;
  const reputationOf = async (bundler: Bundler, entryPoint: Address, address: Address) =>
    (await bundler.dumpReputation(entryPoint)).find((e) => e.address === address);

  it.each(versions.filter((v) => v !== "0.9"))(
    "v%s: nonce 1 with the factory again is refused with AA10 (-32500) at estimation and at send; without it both land and the factory stays ok",
    async (version) => {
      const { bundler } = await fx.makeBundler();
      const { account, entryPoint, factory, fields } = await newAccount(version);
      const to = privateKeyToAccount(generatePrivateKey()).address;
      const first = await fx.makeOperation(bundler, account, { to, value: 1n });
      const deploying = await bundler.sendUserOperation(first, entryPoint);
      // What a wallet builds while the account is not on chain yet: nonce 1, with the factory and gas to deploy.
      const queued = await fx.makeOperation(bundler, account, { to, value: 2n }, { nonce: 1n, ...noFactory(version) });
      const redundant = await sign(account, { ...queued, ...fields, verificationGasLimit: first.verificationGasLimit } as UserOperation);

      const estimated = await rejection(bundler.estimateUserOperationGas({ ...redundant, ...unestimatedGas }, entryPoint));
      expect(estimated).toMatchObject({ code: RpcErrorCode.entryPointRejected, message: "AA10 sender already constructed" });
      const sent = await rejection(bundler.sendUserOperation(redundant, entryPoint));
      expect(sent).toMatchObject({ code: RpcErrorCode.entryPointRejected, message: "AA10 sender already constructed", data: { deployedBy: deploying } });

      const accepted = await bundler.sendUserOperation(queued, entryPoint);
      await bundler.sendBundleNow();
      await bundler.sendBundleNow();
      for (const hash of [deploying, accepted]) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
      expect(await fx.client.getBalance({ address: to })).toBe(3n);
      expect(await reputationOf(bundler, entryPoint, factory)).toEqual({ address: factory, opsSeen: 1, opsIncluded: 1, status: "ok" });
    },
  );

  it("v0.9: nonce 1 with the factory again is estimated and admitted; both land, the EntryPoint ignoring the second's factory (IgnoredInitCode), which reputation does not count", async () => {
    const { bundler } = await fx.makeBundler();
    const { account, entryPoint, factory, fields } = await newAccount("0.9");
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const first = await fx.makeOperation(bundler, account, { to, value: 1n });
    const deploying = await bundler.sendUserOperation(first, entryPoint);
    const queued = await fx.makeOperation(bundler, account, { to, value: 2n }, { nonce: 1n, ...noFactory("0.9") });
    const redundant = await sign(account, { ...queued, ...fields, verificationGasLimit: first.verificationGasLimit } as UserOperation);

    const estimate = await bundler.estimateUserOperationGas({ ...redundant, ...unestimatedGas }, entryPoint);
    expect(estimate.verificationGasLimit).toBeGreaterThan(0n);
    const accepted = await bundler.sendUserOperation(redundant, entryPoint);
    // Only the deploying operation uses the factory: the EntryPoint will ignore the second's.
    expect(await reputationOf(bundler, entryPoint, factory)).toMatchObject({ opsSeen: 1, opsIncluded: 0 });
    await bundler.sendBundleNow();
    await bundler.sendBundleNow();
    for (const hash of [deploying, accepted]) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    expect(await fx.client.getBalance({ address: to })).toBe(3n);
    const ignored = keccak256(toHex("IgnoredInitCode(bytes32,address,address)"));
    const logs = (await bundler.getUserOperationReceipt(accepted))!.receipt.logs;
    expect(logs.filter((log) => log.topics[0] === ignored).map((log) => log.topics[1])).toEqual([accepted]);
    expect(await reputationOf(bundler, entryPoint, factory)).toMatchObject({ opsSeen: 1, opsIncluded: 1 });

    // The factory again once the account is on chain: ignored too, and not counted either.
    const later = await fx.makeOperation(bundler, account, { to, value: 4n }, { nonce: 2n, ...noFactory("0.9") });
    const onChain = await bundler.sendUserOperation(await sign(account, { ...later, ...fields, verificationGasLimit: first.verificationGasLimit } as UserOperation), entryPoint);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(onChain))?.success).toBe(true);
    expect(await reputationOf(bundler, entryPoint, factory)).toMatchObject({ opsSeen: 1, opsIncluded: 1 });
  });

  it("an operation on another nonce key that carries the factory of a pooled deploying operation is refused with AA10 (-32500) at estimation and at send", async () => {
    const { bundler } = await fx.makeBundler();
    const { account, entryPoint } = await newAccount("0.7");
    const first = await fx.makeOperation(bundler, account, { to: account.address });
    const deploying = await bundler.sendUserOperation(first, entryPoint);
    // Key 1, sequence 0: valid on its own (as viem's fresh nonce keys are), so only the pool tells that the account will exist.
    const otherKey = await sign(account, { ...first, nonce: 1n << 64n });
    const aa10 = { code: RpcErrorCode.entryPointRejected, message: "AA10 sender already constructed", data: { deployedBy: deploying } };
    expect(await rejection(bundler.estimateUserOperationGas({ ...otherKey, ...unestimatedGas }, entryPoint))).toMatchObject(aa10);
    expect(await rejection(bundler.sendUserOperation(otherKey, entryPoint))).toMatchObject(aa10);
  });

  const outsider = () =>
    createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: privateKeyToAccount(fx.devnet.accountKeys.at(-2)!) });

  // v0.8's SimpleAccountFactory deploys only for its EntryPoint's SenderCreator.
  it.each<EntryPointVersion>(["0.6", "0.7"])(
    "v%s: an AA10 in the bundle (the account deployed through its factory by someone else meanwhile) drops the operation and does not count against the factory",
    async (version) => {
      const { bundler, store } = await fx.makeBundler();
      const { account, entryPoint, factory, factoryData } = await newAccount(version);
      const hash = await bundler.sendUserOperation(await fx.makeOperation(bundler, account, { to: account.address }), entryPoint);
      expect(await reputationOf(bundler, entryPoint, factory)).toMatchObject({ opsSeen: 1 });
      const deployed = await outsider().sendTransaction({ to: factory, data: factoryData });
      expect((await fx.client.waitForTransactionReceipt({ hash: deployed })).status).toBe("success");

      expect(await bundler.sendBundleNow()).toEqual([]);
      expect(await store.get(hash)).toMatchObject({ status: "dropped", failureReason: "AA10 sender already constructed" });
      // Not banned (GREP-040), and its seen count given back (EREP-015): the failure was not its doing.
      expect(await reputationOf(bundler, entryPoint, factory)).toEqual({ address: factory, opsSeen: 0, opsIncluded: 0, status: "ok" });
    },
  );

  it.each(versions)("v%s: a deploying operation another bundler included first is reported included, not dropped for its AA10", async (version) => {
    const { bundler, store } = await fx.makeBundler();
    const { account, entryPoint, factory } = await newAccount(version);
    const op = await fx.makeOperation(bundler, account, { to: account.address });
    const hash = await bundler.sendUserOperation(op, entryPoint);
    const data = encodeFunctionData({ abi: abis[version], functionName: "handleOps", args: [[toEntryPointStruct(op)], outsider().account.address] } as never);
    const included = await outsider().sendTransaction({ to: entryPoint, data, gas: 2_000_000n });
    expect((await fx.client.waitForTransactionReceipt({ hash: included })).status).toBe("success");

    expect(await bundler.sendBundleNow()).toEqual([]);
    expect(await store.get(hash)).toMatchObject({ status: "included", transactionHash: included });
    expect(await bundler.getUserOperationReceipt(hash)).toMatchObject({ success: true, receipt: { transactionHash: included } });
    expect((await reputationOf(bundler, entryPoint, factory))?.status).toBe("ok");
  });
});
