import { CANONICAL_DEPLOYMENTS, SIMPLE_7702_ACCOUNT } from "@bundlekit/devnet";
import { createWalletClient, http, numberToHex, parseEther } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { entryPoint08Abi, toSimple7702SmartAccount } from "viem/account-abstraction";
import { recoverAuthorizationAddress } from "viem/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { toEntryPointStruct } from "../src/userop/pack.ts";
import type { UserOperationV07 } from "../src/userop/types.ts";
import { engineFixture, rejection, unestimatedGas } from "./fixtures.ts";

/** EIP-7702 operations on v0.8 (and v0.9): simulated, estimated and bundled with their authorization, refused at once when it cannot apply. */
describe("EIP-7702 operations", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  let bundler: Bundler;

  beforeAll(async () => {
    fx = await engineFixture();
    ({ bundler } = await fx.makeBundler());
  });
  afterAll(async () => {
    await fx.devnet.stop();
  });

  /** A funded EOA as viem's Simple7702 account, and an operation of it (estimated, signed) carrying `authorize`'s authorization. */
  async function operation(authorize: (owner: PrivateKeyAccount, nonce: number) => ReturnType<PrivateKeyAccount["signAuthorization"]>, entryPoint: "0.8" | "0.9" = "0.8") {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: privateKeyToAccount(fx.devnet.accountKeys.at(-3)!) });
    await fx.client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: owner.address, value: parseEther("1") }) });
    const account = await toSimple7702SmartAccount({ client: fx.client, owner, entryPoint });
    const authorization = await authorize(owner, await fx.client.getTransactionCount({ address: owner.address }));
    const draft = {
      sender: owner.address,
      nonce: await account.getNonce(),
      callData: await account.encodeCalls([{ to: owner.address, value: 1n }]),
      ...unestimatedGas,
      signature: await account.getStubSignature(),
      authorization,
    } as UserOperationV07;
    const estimate = await bundler.estimateUserOperationGas(draft, account.entryPoint.address);
    const op = { ...draft, ...estimate };
    return { owner, account, op: { ...op, signature: await account.signUserOperation({ ...op, chainId: fx.devnet.chainId } as never) } };
  }

  const delegate = (owner: PrivateKeyAccount, nonce: number, chainId = fx.devnet.chainId) =>
    owner.signAuthorization({ contractAddress: SIMPLE_7702_ACCOUNT, chainId, nonce });

  it("an operation with the sender's authorization is bundled with it and delegates the EOA", async () => {
    const { owner, account, op } = await operation((o, nonce) => delegate(o, nonce));
    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    expect(await fx.client.getCode({ address: owner.address })).toBe(`0xef0100${SIMPLE_7702_ACCOUNT.slice(2).toLowerCase()}`);
  });

  it("v0.8: a delegated sender's 0x7702 operation without eip7702Auth gets the EntryPoint's userOpHash, with the delegate read from its code", async () => {
    const { owner, account, op: first } = await operation((o, nonce) => delegate(o, nonce));
    await bundler.sendUserOperation(first, account.entryPoint.address);
    await bundler.sendBundleNow();
    expect(await fx.client.getCode({ address: owner.address })).toBe(`0xef0100${SIMPLE_7702_ACCOUNT.slice(2).toLowerCase()}`);

    const draft = {
      sender: owner.address,
      nonce: await account.getNonce(),
      factory: "0x7702",
      factoryData: "0x",
      callData: await account.encodeCalls([{ to: owner.address, value: 1n }]),
      ...unestimatedGas,
      signature: await account.getStubSignature(),
    } as UserOperationV07;
    const op = { ...draft, ...(await bundler.estimateUserOperationGas(draft, account.entryPoint.address)) };
    // The EntryPoint hashes the 0x7702 initCode with the delegate in the sender's code.
    const expected = await fx.client.readContract({ address: account.entryPoint.address, abi: entryPoint08Abi, functionName: "getUserOpHash", args: [toEntryPointStruct(op)] });
    const hash = await bundler.sendUserOperation({ ...op, signature: await owner.sign({ hash: expected }) }, account.entryPoint.address);
    expect(hash).toBe(expected);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("v0.9: an operation with the sender's authorization to v0.9's Simple7702Account is bundled with it and delegates the EOA", async () => {
    const v09 = CANONICAL_DEPLOYMENTS["0.9"].simple7702Account!;
    const { owner, account, op } = await operation((o, nonce) => o.signAuthorization({ contractAddress: v09, chainId: fx.devnet.chainId, nonce }), "0.9");
    expect(account.entryPoint.address).toBe(CANONICAL_DEPLOYMENTS["0.9"].entryPoint);
    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    expect(await fx.client.getCode({ address: owner.address })).toBe(`0xef0100${v09.slice(2).toLowerCase()}`);
  });

  it("a high-s twin of the sender's authorization is refused with -32602 at send and estimate; the original is accepted afterwards and lands", async () => {
    const { owner, account, op } = await operation((o, nonce) => delegate(o, nonce));
    const authorization = op.authorization!;
    // The same signature with s' = n - s and yParity flipped: it recovers the same signer, and the
    // operation keeps its hash, but EIP-7702 requires s <= n/2, so the chain would skip it.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const twin = { ...op, authorization: { ...authorization, s: numberToHex(n - BigInt(authorization.s), { size: 32 }), yParity: 1 - authorization.yParity! } };
    expect(await recoverAuthorizationAddress({ authorization: twin.authorization })).toBe(owner.address);
    for (const refused of [bundler.sendUserOperation(twin, account.entryPoint.address), bundler.estimateUserOperationGas({ ...twin, ...unestimatedGas }, account.entryPoint.address)]) {
      const error = await rejection(refused);
      expect(error.code).toBe(RpcErrorCode.invalidParams);
      expect(error.message).toMatch(/^invalid eip7702Auth\.s: is above secp256k1n\/2/);
      expect(error.data).toMatchObject({ field: "eip7702Auth.s" });
    }
    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it.each<[string, (owner: PrivateKeyAccount, nonce: number) => ReturnType<PrivateKeyAccount["signAuthorization"]>, RegExp]>([
    ["signed by another key", (_o, nonce) => delegate(privateKeyToAccount(generatePrivateKey()), nonce), /is signed by 0x[0-9a-fA-F]{40}, not by the sender/],
    ["for another chain", (o, nonce) => delegate(o, nonce, 1), /is for chain 1, not 31337/],
    ["at a stale nonce", (o, nonce) => delegate(o, nonce + 1), /has nonce \d+; the sender's account nonce is \d+/],
  ])("an authorization %s is refused at once with -32602", async (_what, authorize, message) => {
    const { account, op } = await operation(authorize);
    const error = await rejection(bundler.sendUserOperation(op, account.entryPoint.address));
    expect(error.code).toBe(RpcErrorCode.invalidParams);
    expect(error.message).toMatch(/^invalid eip7702Auth: /);
    expect(error.message).toMatch(message);
  });
});
