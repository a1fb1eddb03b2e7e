import { deployRuleProbes, type RuleProbes } from "@bundlekit/devnet";
import { createWalletClient, encodeFunctionData, getAddress, http, parseAbi, parseGwei, toHex } from "viem";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceFixture } from "./service-fixture.ts";

/** Safe mode, the service's default, as a client sees it through viem's bundler client. */
describe("safe mode through the service", () => {
  let fx: Awaited<ReturnType<typeof serviceFixture>>;
  let probes: RuleProbes;
  let salt = 1n;
  beforeAll(async () => {
    fx = await serviceFixture();
    const deployer = createWalletClient({ chain: fx.devnet.chain, transport: http(fx.devnet.rpcUrl), account: privateKeyToAccount(fx.devnet.accountKeys.at(-2)!) });
    probes = await deployRuleProbes(fx.client, deployer, "0.7");
  }, 60_000);
  afterAll(async () => {
    await fx?.service.close();
    await fx?.devnet.stop();
  });

  /** eth_sendUserOperation of an existing RuleAccount whose validation runs `rule`, through viem's bundler client. */
  async function send(rule: string) {
    const sender = await probes.deployAccount(salt++);
    const op = {
      sender,
      nonce: 0n,
      callData: encodeFunctionData({ abi: parseAbi(["function execute()"]), functionName: "execute" }),
      callGasLimit: 50_000n,
      verificationGasLimit: 1_000_000n,
      preVerificationGas: 300_000n,
      maxFeePerGas: parseGwei("20"),
      maxPriorityFeePerGas: parseGwei("1"),
      signature: toHex(rule),
    };
    const bundler = createBundlerClient({ transport: http(fx.service.url) });
    return { sender, sent: bundler.request({ method: "eth_sendUserOperation", params: [formatUserOperationRequest(op), probes.entryPoint] }) };
  }

  it("refuses an account that reads block.timestamp with -32502 naming the account, the opcode and the rule", async () => {
    const { sender, sent } = await send("TIMESTAMP");
    const error = await sent.then(
      () => undefined,
      (e: unknown) => e as { code: number; details: string; cause?: { data?: unknown } },
    );
    expect(error?.code).toBe(-32502);
    expect(error?.details).toBe(`account ${getAddress(sender)} uses banned opcode TIMESTAMP (OP-011)`);
  });

  it("accepts a well-behaved account, and bundler_config reports safe mode", async () => {
    const { sent } = await send("OK");
    await expect(sent).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    expect((await fx.call("bundler_config")).result).toMatchObject({ validationMode: "safe", validationTracer: "in-process" });
  });
});
