import {
  type Devnet,
  deployGasWorkloads,
  deploySimple7702Accounts,
  type EntryPointVersion,
  GAS_WORKLOADS,
  gasWorkloadsAbi,
  SIMPLE_7702_ACCOUNT,
  SIMPLE_7702_ACCOUNTS_BEFORE_V08,
} from "@bundlekit/devnet";
import { createSmartAccountClient } from "permissionless";
import { toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  http,
  isAddressEqual,
  numberToHex,
  type PublicClient,
  type SignedAuthorization,
} from "viem";
import {
  createBundlerClient,
  formatUserOperationRequest,
  type SmartAccount,
  toSimple7702SmartAccount,
  type UserOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { recoverAuthorizationAddress } from "viem/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

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
  let fx: ServiceFixture;
  let devnet: Devnet;
  let client: PublicClient;

  beforeAll(async () => {
    fx = await serviceFixture();
    // Bundling on its own: the clients wait for their receipts.
    fx.service.bundler.setBundleInterval(100);
    fx.service.bundler.setBundlingMode("auto");
    ({ devnet, client } = fx);
    await deploySimple7702Accounts(devnet);
    await deployGasWorkloads(devnet);
  });
  afterAll(() => fx?.close());

  /** A fresh, funded EOA. */
  async function fundedOwner() {
    const owner = privateKeyToAccount(generatePrivateKey());
    await fx.fund(owner.address);
    return owner;
  }

  function bundlerClient(account: SmartAccount) {
    return createBundlerClient({
      account,
      client,
      transport: http(fx.service.url),
      pollingInterval: 100,
    });
  }

  /** Every frame of a call trace, depth first. */
  function framesOf(frame: Frame): Frame[] {
    return [frame, ...(frame.calls ?? []).flatMap(framesOf)];
  }

  const recipient = () => privateKeyToAccount(generatePrivateKey()).address;
  const counter = () =>
    client.readContract({
      address: GAS_WORKLOADS,
      abi: gasWorkloadsAbi,
      functionName: "counter",
    }) as Promise<bigint>;
  const consume = (data: Hex) => ({
    to: GAS_WORKLOADS,
    data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "consume", args: [data] }),
  });

  /** The devnet's EIP-7702 account of `version`: the delegate an EOA's authorization names. */
  const delegateOf = (version: EntryPointVersion): Address =>
    version === "0.6" || version === "0.7" ? SIMPLE_7702_ACCOUNTS_BEFORE_V08[version] : devnet.deployments[version].simple7702Account!;

  /**
   * A fresh, funded EOA as an EIP-7702 smart account on `version`, and its signed authorization
   * to the devnet's delegate: permissionless's SimpleAccount in its EIP-7702 form (before v0.8,
   * with the devnet's account for that version as its logic), or viem's Simple7702 account on v0.8.
   */
  async function account7702(version: EntryPointVersion) {
    const owner = await fundedOwner();
    const account =
      version === "0.8"
        ? await toSimple7702SmartAccount({ client, owner })
        : await toSimpleSmartAccount({
            client,
            owner,
            eip7702: true,
            accountLogicAddress: delegateOf(version),
            // permissionless types its EIP-7702 form for v0.8 alone; it signs and encodes for the version it is given.
            entryPoint: {
              address: devnet.deployments[version].entryPoint,
              version: version as "0.8",
            },
          });
    const authorization = await owner.signAuthorization({
      contractAddress: delegateOf(version),
      chainId: devnet.chainId,
      nonce: await client.getTransactionCount({ address: owner.address }),
    });
    return { owner, account, authorization };
  }

  /** The same signature with s' = n - s and yParity flipped: it recovers the same signer, but EIP-7702 requires s <= n/2. */
  function highS(authorization: SignedAuthorization): SignedAuthorization {
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    return {
      ...authorization,
      s: numberToHex(n - BigInt(authorization.s), { size: 32 }),
      yParity: 1 - authorization.yParity!,
    };
  }

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

  describe.each<EntryPointVersion>(["0.6", "0.7"])(
    "EntryPoint v%s, whose EntryPoint knows no 0x7702 marker",
    (version) => {
      it("permissionless's client delegates the EOA with its first operation (the bundle transaction carries the authorization), then sends a batch", async () => {
        const { owner, account, authorization } = await account7702(version);
        expect(account.address).toBe(owner.address);
        const smart = createSmartAccountClient({
          account,
          chain: devnet.chain,
          client,
          bundlerTransport: http(fx.service.url),
          pollingInterval: 100,
        });
        const a = recipient();
        const first = await smart.sendTransaction({ to: a, value: 7n, authorization });
        const bundle = await client.getTransaction({ hash: first });
        expect(bundle.type).toBe("eip7702");
        expect(bundle.to?.toLowerCase()).toBe(devnet.deployments[version].entryPoint.toLowerCase());
        // The sender's own authorization, delegating it to the devnet's account.
        expect(bundle.authorizationList).toHaveLength(1);
        const [carried] = bundle.authorizationList!;
        expect(await recoverAuthorizationAddress({ authorization: carried! })).toBe(owner.address);
        expect(carried).toMatchObject({
          address: authorization.address.toLowerCase(),
          chainId: devnet.chainId,
          nonce: 0,
        });
        expect((await client.getTransactionReceipt({ hash: first })).status).toBe("success");
        expect(await client.getCode({ address: owner.address })).toBe(
          `0xef0100${delegateOf(version).slice(2).toLowerCase()}`,
        );
        // Delegated now: the client sends no authorization any more, and the bundle is a plain one.
        // (v0.6's SimpleAccount batches calls without value: the batch's effect is GasWorkloads' counter, +2 and +3.)
        const before = await counter();
        const batch = await smart.sendTransaction({
          calls: [consume("0x1234"), consume("0x567890")],
        });
        expect((await client.getTransaction({ hash: batch })).type).toBe("eip1559");
        expect((await client.getTransactionReceipt({ hash: batch })).status).toBe("success");
        expect(await counter()).toBe(before + 5n);
      });

      it("viem's client estimates with its stub authorization; sending the stub is refused with -32602, not dropped later", async () => {
        const { account } = await account7702(version);
        const bundler = bundlerClient(account);
        const calls = [{ to: recipient(), value: 1n }];
        const estimate = await bundler.estimateUserOperationGas({ calls });
        expect(estimate.verificationGasLimit).toBeGreaterThan(0n);
        // The stub's 25,000 gas of the authorization are in preVerificationGas.
        expect(estimate.preVerificationGas).toBeGreaterThan(25_000n);
        const error = await bundler.sendUserOperation({ calls }).then(
          () => undefined,
          (e: unknown) =>
            e as {
              details?: string;
              walk: (fn: (e: unknown) => boolean) => { code?: number } | null;
            },
        );
        expect(error?.walk((e) => (e as { code?: number }).code === -32602)?.code).toBe(-32602);
        expect(error?.details).toMatch(
          /eip7702Auth: is signed by 0x[0-9a-fA-F]{40}, not by the sender/,
        );
      });
    },
  );

  it("v0.7: the 0x7702 factory marker, which its EntryPoint does not know, is refused with -32602 naming factory", async () => {
    const { account, authorization } = await account7702("0.7");
    const operation = await bundlerClient(account).prepareUserOperation({
      calls: [{ to: recipient(), value: 0n }],
      authorization,
    });
    const wire = {
      ...formatUserOperationRequest(operation as UserOperation),
      factory: "0x7702",
      factoryData: "0x",
    };
    const { error } = await fx.call("eth_estimateUserOperationGas", [
      wire,
      account.entryPoint.address,
    ]);
    expect(error).toMatchObject({ code: -32602, data: { field: "params[0].factory" } });
    expect(error?.message).toMatch(/EIP-7702 marker 0x7702, which needs EntryPoint v0.8 or later/);
  });

  it.each<EntryPointVersion>(["0.6", "0.7", "0.8"])(
    "v%s: a high-s twin of the sender's authorization is refused with -32602 naming eip7702Auth.s at estimation and at send; the original lands",
    async (version) => {
      const { owner, account, authorization } = await account7702(version);
      const bundler = bundlerClient(account);
      const operation = await bundler.prepareUserOperation({
        calls: [{ to: recipient(), value: 3n }],
        authorization,
      });
      const signed = {
        ...operation,
        signature: await account.signUserOperation(operation as UserOperation),
      } as UserOperation;
      const twin = formatUserOperationRequest({ ...signed, authorization: highS(authorization) });
      for (const method of ["eth_estimateUserOperationGas", "eth_sendUserOperation"]) {
        const { error } = await fx.call(method, [twin, account.entryPoint.address]);
        expect(error, method).toMatchObject({ code: -32602, data: { field: "eip7702Auth.s" } });
        expect(error?.message, method).toMatch(/^invalid eip7702Auth\.s: is above secp256k1n\/2/);
      }
      const { result: hash } = await fx.call("eth_sendUserOperation", [
        formatUserOperationRequest(signed),
        account.entryPoint.address,
      ]);
      const receipt = await bundler.waitForUserOperationReceipt({
        hash: hash as Hex,
        timeout: 30_000,
      });
      expect(receipt.success).toBe(true);
      expect(await client.getCode({ address: owner.address })).toBe(
        `0xef0100${delegateOf(version).slice(2).toLowerCase()}`,
      );
    },
  );
});
