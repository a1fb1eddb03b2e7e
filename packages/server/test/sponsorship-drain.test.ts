import { maxCostOf, type UserOperation as CoreUserOperation } from "@bundlekit/core";
import { createSimulatedClock } from "@bundlekit/core/simulation";
import {
  DEVNET_PAYMASTER_SIGNER_KEY,
  type Devnet,
  ENTRY_POINT_VERSIONS,
  startDevnet,
  toSimpleAccount,
} from "@bundlekit/devnet";
import {
  concat,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseAbi,
  parseEther,
  parseEventLogs,
  parseGwei,
  type PublicClient,
  toHex,
} from "viem";
import {
  entryPoint07Abi,
  formatUserOperationRequest,
  type SmartAccount,
  toPackedUserOperation,
  type UserOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";
import { createConfiguredSponsorshipPolicy, type SponsorKey } from "../src/sponsorship/configured-policy.ts";

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
const depositAbi = parseAbi(["function balanceOf(address) view returns (uint256)"]);

/** The key the drainer holds: a real one, as leaked keys are. */
const apiKey = "leaked-app-key-5e0c2a91";
/** The policy's limits for that key (v0.6 reserves its 500k verification gas three times: 0.0195 ETH at the caps). */
const limits = {
  maxFeePerGas: parseGwei("10"),
  maxPreVerificationGas: 500_000n,
  maxCostPerOperation: parseEther("0.02"),
  quota: { windowSeconds: 3600, operations: 100, cost: parseEther("0.03") },
} satisfies Partial<SponsorKey>;

type RpcAnswer = { result?: Record<string, Hex>; error?: { code: number; message: string; data?: Record<string, unknown> } };

/**
 * The drainer of the paymaster endpoint, as it would try it on the devnet: accounts that hold no
 * ETH ask for sponsorship of operations with huge preVerificationGas and fees, and the drainer
 * bundles whatever it gets itself, naming itself beneficiary. With a policy, what it asks above
 * the caps is refused (-32001, naming the cap) and the paymaster's deposit does not move; within
 * the caps, it gets no more than the key's quota.
 */
describe("a drainer against the paymaster endpoint", () => {
  let devnet: Devnet;
  let service: BundlerService;
  let client: PublicClient;
  const clock = createSimulatedClock(Date.UTC(2026, 0, 1));

  beforeAll(async () => {
    devnet = await startDevnet();
    const config = loadConfig({ BUNDLEKIT_RPC_URL: devnet.rpcUrl, BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","), BUNDLEKIT_PORT: "0", BUNDLEKIT_DATABASE: ":memory:" });
    service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl }, undefined, {
      paymaster: {
        signerKey: DEVNET_PAYMASTER_SIGNER_KEY,
        paymasters: Object.fromEntries(ENTRY_POINT_VERSIONS.map((version) => [version, devnet.deployments[version].paymasters.verifying])),
        // One key per EntryPoint version, so each version's quota is its own.
        policy: createConfiguredSponsorshipPolicy({ validForSeconds: 90, keys: ENTRY_POINT_VERSIONS.map((version) => ({ name: version, apiKey: `${apiKey}-${version}`, ...limits })) }, clock),
      },
    });
    client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) }) as PublicClient;
  });
  afterAll(async () => {
    await service?.close();
    await devnet?.stop();
  });

  describe.each(ENTRY_POINT_VERSIONS)("EntryPoint v%s", (version) => {
    const entryPoint = () => devnet.deployments[version].entryPoint;
    const paymaster = () => devnet.deployments[version].paymasters.verifying;
    const deposit = () => client.readContract({ address: entryPoint(), abi: depositAbi, functionName: "balanceOf", args: [paymaster()] });
    const drainer = () => createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-2)!) });

    const ask = async (method: string, op: UserOperation): Promise<RpcAnswer> => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [formatUserOperationRequest(op), entryPoint(), toHex(devnet.chainId), {}] });
      const response = await fetch(`${service.url}?apikey=${apiKey}-${version}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      return (await response.json()) as RpcAnswer;
    };

    /**
     * A new account that holds no ETH, deploying itself and calling itself, at the given gas; v0.6
     * with no paymasterAndData (the drainer owes the endpoint no stub), v0.7+ naming the paymaster
     * with the limits the endpoint signs by default.
     */
    async function unfundedOperation(gas: { preVerificationGas: bigint; maxFeePerGas: bigint; callGasLimit?: bigint }) {
      const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version });
      expect(await client.getBalance({ address: account.address })).toBe(0n);
      const { factory, factoryData } = await account.getFactoryArgs();
      const common = {
        sender: account.address,
        nonce: 0n,
        callData: await account.encodeCalls([{ to: account.address, value: 0n }]),
        callGasLimit: gas.callGasLimit ?? 50_000n,
        verificationGasLimit: 500_000n,
        preVerificationGas: gas.preVerificationGas,
        maxFeePerGas: gas.maxFeePerGas,
        maxPriorityFeePerGas: gas.maxFeePerGas,
        signature: "0x" as Hex,
      };
      const op = (
        version === "0.6"
          ? { ...common, initCode: concat([factory!, factoryData!]), paymasterAndData: "0x" }
          : { ...common, factory, factoryData, paymaster: paymaster(), paymasterVerificationGasLimit: 100_000n, paymasterPostOpGasLimit: 0n, paymasterData: "0x" }
      ) as UserOperation;
      return { account, op };
    }

    /** What `op` may cost the paymaster once it names it (v0.6 reserves verification gas three times then). */
    const sponsoredCost = (op: UserOperation) =>
      maxCostOf((version === "0.6" ? { ...op, paymasterAndData: paymaster() } : op) as CoreUserOperation);

    /** `op` with the paymaster data the endpoint answered (its gas limits are the op's already), signed by its account. */
    async function signed(account: SmartAccount, op: UserOperation, answer: Record<string, Hex>): Promise<UserOperation> {
      const fields = version === "0.6" ? { paymasterAndData: answer.paymasterAndData } : { paymaster: answer.paymaster, paymasterData: answer.paymasterData };
      const withPaymaster = { ...op, ...fields } as UserOperation;
      return { ...withPaymaster, signature: await account.signUserOperation(withPaymaster as never) } as UserOperation;
    }

    /** The drainer's own bundle of `ops`, paying itself; `gas` forces it on chain even when it would revert. */
    async function bundleAsDrainer(ops: UserOperation[], gas?: bigint) {
      const wallet = drainer();
      const abi = version === "0.6" ? handleOpsAbi["0.6"] : handleOpsAbi.packed;
      const structs = ops.map((op) => (version === "0.6" ? op : toPackedUserOperation(op)));
      const hash = await wallet.writeContract({ address: entryPoint(), abi, functionName: "handleOps", args: [structs as never, wallet.account.address], ...(gas ? { gas } : {}) });
      return client.waitForTransactionReceipt({ hash });
    }

    it("the issue's drain: three unfunded accounts asking for preVerificationGas 5,000,000 at 200 gwei are refused (-32001, maxFeePerGas), and the deposit does not move", async () => {
      const before = await deposit();
      const stubbed: UserOperation[] = [];
      for (let i = 0; i < 3; i++) {
        const { account, op } = await unfundedOperation({ preVerificationGas: 5_000_000n, maxFeePerGas: parseGwei("200") });
        const { error } = await ask("pm_getPaymasterData", op);
        expect(error).toEqual({
          code: -32001,
          message: "sponsorship refused: maxFeePerGas 200000000000 wei is above the cap maxFeePerGas of 10000000000 wei",
          data: { cap: "maxFeePerGas", limit: toHex(parseGwei("10")), value: toHex(parseGwei("200")) },
        });
        // Stub data is all it gets: signed by no key the paymaster trusts.
        stubbed.push(await signed(account, op, (await ask("pm_getPaymasterStubData", op)).result!));
      }
      // Bundled by the drainer itself, the stubs fail the paymaster's signature check: the whole bundle reverts.
      expect((await bundleAsDrainer(stubbed, 5_000_000n)).status).toBe("reverted");
      expect(await deposit()).toBe(before);
    });

    it("each cap is named when it is the one passed: preVerificationGas, then the max cost of all gas limits", async () => {
      const hugePreVerification = (await unfundedOperation({ preVerificationGas: 5_000_000n, maxFeePerGas: parseGwei("10") })).op;
      expect((await ask("pm_getPaymasterData", hugePreVerification)).error).toEqual({
        code: -32001,
        message: "sponsorship refused: preVerificationGas 5000000 is above the cap maxPreVerificationGas of 500000",
        data: { cap: "maxPreVerificationGas", limit: toHex(500_000), value: toHex(5_000_000) },
      });
      const hugeCall = (await unfundedOperation({ preVerificationGas: 100_000n, maxFeePerGas: parseGwei("10"), callGasLimit: 2_000_000n })).op;
      const cost = sponsoredCost(hugeCall);
      expect((await ask("pm_getPaymasterData", hugeCall)).error).toEqual({
        code: -32001,
        message: `sponsorship refused: max cost (gas limits × maxFeePerGas) ${cost} wei is above the cap maxCostPerOperation of ${parseEther("0.02")} wei`,
        data: { cap: "maxCostPerOperation", limit: toHex(parseEther("0.02")), value: toHex(cost) },
      });
    });

    it("within the caps, the drainer is signed no more than the quota, and its own bundle takes no more than that from the deposit", async () => {
      const signedOps: UserOperation[] = [];
      let refusal: RpcAnswer["error"];
      let atCaps: UserOperation | undefined;
      // The quota holds at most 3 operations at the caps: ten attempts are plenty.
      for (let attempt = 0; attempt < 10 && refusal === undefined; attempt++) {
        const { account, op } = await unfundedOperation({ preVerificationGas: version === "0.6" ? 400_000n : 500_000n, maxFeePerGas: limits.maxFeePerGas });
        atCaps = op;
        const answer = await ask("pm_getPaymasterData", op);
        if (answer.error) refusal = answer.error;
        else signedOps.push(await signed(account, op, answer.result!));
      }
      // Every operation may cost the same: the quota's wei hold exactly this many.
      const perOperation = sponsoredCost(atCaps!);
      expect(signedOps.length).toBe(Number(limits.quota.cost / perOperation));
      expect(refusal).toMatchObject({ code: -32001, data: { cap: "quota.cost", limit: toHex(limits.quota.cost) } });
      expect(refusal?.message).toMatch(/^sponsorship refused: quota of 30000000000000000 wei per 3600 s would be exceeded/);

      const before = await deposit();
      const receipt = await bundleAsDrainer(signedOps);
      const events = parseEventLogs({ abi: entryPoint07Abi, eventName: "UserOperationEvent", logs: receipt.logs });
      expect(events.map((event) => event.args.success)).toEqual(signedOps.map(() => true));
      const paid = events.reduce((sum, event) => sum + event.args.actualGasCost, 0n);
      expect(await deposit()).toBe(before - paid);
      expect(paid).toBeLessThanOrEqual(limits.quota.cost);

      // An hour later on the policy's clock, the key is signed for again.
      await clock.advanceBy(limits.quota.windowSeconds * 1000);
      const again = await ask("pm_getPaymasterData", (await unfundedOperation({ preVerificationGas: 100_000n, maxFeePerGas: limits.maxFeePerGas })).op);
      expect(again.error).toBeUndefined();
      expect((again.result?.paymaster ?? again.result?.paymasterAndData?.slice(0, 42))?.toLowerCase()).toBe(paymaster().toLowerCase());
    });
  });
});
