import {
  type Devnet,
  ENTRY_POINT_VERSIONS,
  type EntryPointVersion,
  toSimpleAccount,
  verifyingPaymasterData,
} from "@bundlekit/devnet";
import {
  type BaseError,
  concat,
  createWalletClient,
  encodeAbiParameters,
  getAddress,
  type Hex,
  http,
  parseEther,
  type PublicClient,
  RpcRequestError,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  createBundlerClient,
  type SmartAccount,
  UserOperationExecutionError,
} from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * -32503 as a wallet meets it: viem's bundler client sends an operation sponsored by the devnet's
 * verifying paymaster, signed for a validity window, to the stand-alone service on each
 * EntryPoint version. The message opens with the EntryPoint's own text, `AA32 paymaster expired
 * or not due`, which viem reads as its paymaster-expired error. The service runs on the wall clock, so each window sits an hour or 20 s
 * from the moment it is signed, and the seconds in the message are read back, not predicted.
 */
describe("the validity window through the service (-32503)", () => {
  let fx: ServiceFixture;
  let devnet: Devnet;
  let client: PublicClient;
  let funding: Promise<unknown> = Promise.resolve();

  beforeAll(async () => {
    fx = await serviceFixture({ debugMethods: true });
    ({ devnet, client } = fx);
  });
  afterAll(() => fx?.close());

  describe.each(ENTRY_POINT_VERSIONS)("EntryPoint v%s", (version: EntryPointVersion) => {
    const paymaster = () => devnet.deployments[version].paymasters.verifying;
    const bundlerClient = (account: SmartAccount) =>
      createBundlerClient({ account, client, transport: http(fx.service.url) });

    /** A SimpleAccount of a fresh owner, funded and deployed by an operation of its own through the service. */
    async function deployedAccount(): Promise<SmartAccount> {
      const account = await toSimpleAccount({
        client,
        owner: privateKeyToAccount(generatePrivateKey()),
        version,
      });
      const funder = createWalletClient({
        chain: devnet.chain,
        transport: http(devnet.rpcUrl),
        account: privateKeyToAccount(devnet.accountKeys.at(-1)!),
      });
      const sent = funding.then(async () =>
        client.waitForTransactionReceipt({
          hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }),
        }),
      );
      funding = sent.catch(() => {});
      await sent;
      await bundlerClient(account).sendUserOperation({
        calls: [{ to: account.address, value: 0n }],
      });
      expect((await fx.call("debug_bundler_sendBundleNow", [])).error).toBeUndefined();
      expect(await client.getCode({ address: account.address })).toMatch(/^0x[0-9a-f]+$/);
      return account;
    }

    /**
     * Send, through viem's bundler client, an operation of a fresh deployed account sponsored for
     * the window `windowAt(now)` returns, `now` being the wall clock's second when it is signed.
     */
    async function sendSponsored(
      windowAt: (now: number) => { validUntil?: number; validAfter?: number },
    ) {
      const account = await deployedAccount();
      const stub = concat([
        encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]),
        await account.getStubSignature(),
      ]);
      const sponsorship = (data: Hex) =>
        version === "0.6"
          ? { paymasterAndData: concat([paymaster(), data]) }
          : { paymaster: paymaster(), paymasterData: data };
      const wallet = bundlerClient(account);
      const prepared = (await wallet.prepareUserOperation({
        calls: [{ to: account.address, value: 0n }],
        ...sponsorship(stub),
      } as never)) as Record<string, unknown>;
      const now = Math.floor(Date.now() / 1000);
      const data = await verifyingPaymasterData({
        client,
        version,
        paymaster: paymaster(),
        userOperation: prepared as never,
        ...windowAt(now),
      });
      // The account signs last, over the paymaster's data: viem's client does, as the stub signature is left out.
      delete prepared.signature;
      const paymasterFields =
        version === "0.6" ? { paymasterAndData: data } : { paymasterData: data };
      const sent = wallet.sendUserOperation({ ...prepared, ...paymasterFields } as never);
      return { now, sent };
    }

    /** What the client sees of a refusal: viem's error for it, and the JSON-RPC error's code, message and data. */
    async function refusal(sent: Promise<unknown>) {
      const error = await sent.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UserOperationExecutionError);
      const rpc = (error as BaseError).walk((e) => e instanceof RpcRequestError) as RpcRequestError;
      return {
        cause: (error as BaseError).cause,
        code: rpc.code,
        message: rpc.details,
        data: rpc.data,
      };
    }

    /** The seconds `message` states (`pattern`'s first group) lie within `[low, high]`. */
    function expectSeconds(message: string, pattern: RegExp, [low, high]: [number, number]) {
      const seconds = Number(message.match(pattern)?.[1]);
      expect(seconds).toBeGreaterThanOrEqual(low);
      expect(seconds).toBeLessThanOrEqual(high);
    }
    /** Whole seconds since `signedAt`: how far the service's clock may have moved past the signing. */
    const since = (signedAt: number) => Math.floor(Date.now() / 1000) - signedAt;

    it("refuses a paymaster window that ended an hour ago: -32503, AA32, viem's paymaster-expired error, both bounds and the paymaster in data", async () => {
      const { now, sent } = await sendSponsored((t) => ({
        validUntil: t - 3600,
        validAfter: t - 7200,
      }));
      const { cause, code, message, data } = await refusal(sent);
      expect(cause).toMatchObject({ name: "UserOperationPaymasterExpiredError" });
      expect(code).toBe(-32503);
      const pattern = new RegExp(`^AA32 paymaster expired or not due: validUntil ${now - 3600} passed (\\d+) s ago$`);
      expect(message).toMatch(pattern);
      expectSeconds(message, pattern, [3600, 3600 + since(now)]);
      expect(data).toEqual({
        validUntil: `0x${(now - 3600).toString(16)}`,
        validAfter: `0x${(now - 7200).toString(16)}`,
        paymaster: getAddress(paymaster()),
      });
    });

    it("refuses a paymaster window that starts in an hour", async () => {
      const { now, sent } = await sendSponsored((t) => ({ validAfter: t + 3600 }));
      const { cause, code, message, data } = await refusal(sent);
      expect(cause).toMatchObject({ name: "UserOperationPaymasterExpiredError" });
      expect(code).toBe(-32503);
      const pattern = new RegExp(`^AA32 paymaster expired or not due: validAfter ${now + 3600} is (\\d+) s from now$`);
      expect(message).toMatch(pattern);
      expectSeconds(message, pattern, [3600 - since(now), 3600]);
      expect(data).toEqual({
        validUntil: "0xffffffffffff",
        validAfter: `0x${(now + 3600).toString(16)}`,
        paymaster: getAddress(paymaster()),
      });
    });

    it("refuses a paymaster window that ends 20 s after signing, too soon to bundle", async () => {
      const { now, sent } = await sendSponsored((t) => ({ validUntil: t + 20 }));
      const { cause, code, message, data } = await refusal(sent);
      expect(cause).toMatchObject({ name: "UserOperationPaymasterExpiredError" });
      expect(code).toBe(-32503);
      const pattern = new RegExp(
        `^AA32 paymaster expired or not due: validUntil ${now + 20} is within 30 s \\((\\d+) s from now\\): too soon to bundle$`,
      );
      expect(message).toMatch(pattern);
      expectSeconds(message, pattern, [20 - since(now), 20]);
      expect(data).toEqual({
        validUntil: `0x${(now + 20).toString(16)}`,
        validAfter: "0x0",
        paymaster: getAddress(paymaster()),
      });
    });

    it("admits and includes an operation whose paymaster window began a minute ago and ends in an hour", async () => {
      const { sent } = await sendSponsored((t) => ({ validAfter: t - 60, validUntil: t + 3600 }));
      const hash = await sent;
      expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect((await fx.call("debug_bundler_sendBundleNow", [])).error).toBeUndefined();
      const { result: receipt } = await fx.call("eth_getUserOperationReceipt", [hash]);
      expect(receipt).toMatchObject({
        userOpHash: hash,
        success: true,
        paymaster: getAddress(paymaster()),
      });
    });
  });
});
