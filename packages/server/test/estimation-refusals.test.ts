import type { EntryPointVersion } from "@bundlekit/devnet";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Hex, http, parseEther } from "viem";
import {
  createBundlerClient,
  formatUserOperationRequest,
  type SmartAccount,
  type UserOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];

/**
 * What `eth_estimateUserOperationGas` answers where the EntryPoint would refuse the operation, as
 * viem's bundler client sees it against the stand-alone service: the EntryPoint's own reason, in
 * the EntryPoint's order of checks, and never an estimate for an operation that cannot land.
 */
describe("estimation refuses what the EntryPoint refuses", () => {
  let fx: ServiceFixture;

  beforeAll(async () => {
    fx = await serviceFixture();
  });
  afterAll(() => fx?.close());

  /**
   * permissionless's SimpleAccount of a fresh owner on `version` (counterfactual), funded with
   * `value`. permissionless 0.4 knows no v0.9 SimpleAccount: on v0.9 it is given the v0.9
   * EntryPoint and factory as a v0.8 account, which signs and encodes exactly as v0.9 needs.
   */
  async function simpleAccount(version: EntryPointVersion, value: bigint): Promise<SmartAccount> {
    const { entryPoint, simpleAccountFactory } = fx.devnet.deployments[version];
    const account = await toSimpleSmartAccount({
      client: fx.client,
      owner: privateKeyToAccount(generatePrivateKey()),
      ...(version === "0.9"
        ? { entryPoint: { address: entryPoint, version: "0.8" as const }, factoryAddress: simpleAccountFactory }
        : { entryPoint: { address: entryPoint, version } }),
    });
    if (value > 0n) await fx.fund(account.address, value);
    return account;
  }

  type Paymaster = NonNullable<Parameters<typeof createBundlerClient>[0]["paymaster"]>;

  function bundlerClient(account: SmartAccount, paymaster?: Paymaster) {
    return createBundlerClient({
      account,
      client: fx.client,
      transport: http(fx.service.url),
      paymaster,
    });
  }

  /** The JSON-RPC error under what viem throws: its code and message. */
  async function rpcError(promise: Promise<unknown>) {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e as { walk: (fn: (e: unknown) => boolean) => unknown },
    );
    expect(error, "the call was refused").toBeDefined();
    const cause = error!.walk((e) => typeof (e as { code?: unknown }).code === "number") as {
      code: number;
      details?: string;
      shortMessage?: string;
    };
    return { code: cause.code, message: cause.details ?? cause.shortMessage ?? "" };
  }

  const recipient = () => privateKeyToAccount(generatePrivateKey()).address;

  describe.each(versions)("EntryPoint v%s", (version) => {
    it("a paymaster with no code is AA30 paymaster not deployed (-32501), as eth_sendUserOperation answers", async () => {
      const account = await simpleAccount(version, parseEther("1"));
      const nowhere = privateKeyToAccount(generatePrivateKey()).address;
      const fields =
        version === "0.6"
          ? { paymasterAndData: nowhere as Hex }
          : { paymaster: nowhere, paymasterData: "0x" as Hex };
      const sponsor = async () => fields;
      const bundler = bundlerClient(account, {
        getPaymasterStubData: sponsor,
        getPaymasterData: sponsor,
      } as unknown as Paymaster);
      const error = await rpcError(
        bundler.estimateUserOperationGas({ calls: [{ to: recipient(), value: 0n }] }),
      );
      expect(error).toMatchObject({ code: -32501 });
      expect(error.message).toMatch(/^AA30 paymaster not deployed/);
    });

    it("an account that cannot pay its prefund is AA21 didn't pay prefund (-32500); with a state override giving it the balance, it gets an estimate", async () => {
      const account = await simpleAccount(version, 0n);
      const bundler = bundlerClient(account);
      const calls = [{ to: recipient(), value: 0n }];
      const error = await rpcError(bundler.estimateUserOperationGas({ calls }));
      expect(error).toMatchObject({ code: -32500 });
      expect(error.message).toMatch(/^AA21 didn't pay prefund/);
      const estimate = await bundler.estimateUserOperationGas({
        calls,
        stateOverride: [{ address: account.address, balance: parseEther("1") }],
      });
      expect(estimate.verificationGasLimit).toBeGreaterThan(100_000n); // it deploys the account
      expect(estimate.callGasLimit).toBeGreaterThan(0n);
    });
  });

  it.each(versions)(
    "v%s: without a paymaster, v0.7+ answer paymasterVerificationGasLimit and paymasterPostOpGasLimit 0x0; v0.6 has neither field",
    async (version) => {
      const account = await simpleAccount(version, parseEther("1"));
      const bundler = bundlerClient(account);
      const operation = await bundler.prepareUserOperation({
        calls: [{ to: recipient(), value: 0n }],
        parameters: ["factory", "fees", "nonce", "signature"],
      });
      const { result } = await fx.call("eth_estimateUserOperationGas", [
        formatUserOperationRequest(operation as UserOperation),
        account.entryPoint.address,
      ]);
      const paymasterFields = {
        paymasterVerificationGasLimit: result.paymasterVerificationGasLimit,
        paymasterPostOpGasLimit: result.paymasterPostOpGasLimit,
      };
      expect(paymasterFields).toEqual(
        version === "0.6"
          ? { paymasterVerificationGasLimit: undefined, paymasterPostOpGasLimit: undefined }
          : { paymasterVerificationGasLimit: "0x0", paymasterPostOpGasLimit: "0x0" },
      );
      // What viem's client reads.
      const estimate = await bundler.estimateUserOperationGas({
        calls: [{ to: recipient(), value: 0n }],
      });
      if (version !== "0.6")
        expect([estimate.paymasterVerificationGasLimit, estimate.paymasterPostOpGasLimit]).toEqual([
          0n,
          0n,
        ]);
    },
  );
});
