import { deployGasWorkloads, deployRuleProbes, gasWorkloadsAbi } from "@bundlekit/devnet";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  custom,
  encodeFunctionData,
  getAddress,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseAbi,
  parseGwei,
  parseTransaction,
  recoverTransactionAddress,
  toHex,
} from "viem";
import type { SmartAccount } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type BundlerSettings, type BundlerSettingsInput, mergeBundlerSettings } from "../src/engine/settings.ts";
import { type Bundler, createBundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { MempoolStore } from "../src/ports/mempool-store.ts";
import type { Submitter } from "../src/ports/submitter.ts";
import type { StakeStatus } from "../src/reputation/stake.ts";
import { createSimulatedChain, type SimulatedDelivery } from "../src/simulation/simulated-chain.ts";
import { createSimulatedClock, type SimulatedClock } from "../src/simulation/simulated-clock.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import type { UserOperationV07 } from "../src/userop/types.ts";
import { engineFixture, rejection, testSigner, unestimatedGas } from "./fixtures.ts";

/**
 * Each setting of the engine table (`BundlerSettings`, docs/configuration.md) changes what the
 * engine does; this file holds the settings no other test varies. Settings of time and of the
 * transaction tracker run the real engine on a simulated chain and clock.
 */

/** A synthetic v0.7 operation of sender `n`, paying up to 20 gwei per gas with a 1 gwei tip. */
function syntheticOperation(n: number): UserOperationV07 {
  return {
    sender: keccak256(toHex(`config sender ${n}`)).slice(0, 42) as Address,
    nonce: 0n,
    callData: "0x",
    callGasLimit: 50_000n,
    verificationGasLimit: 100_000n,
    preVerificationGas: 100_000n,
    maxFeePerGas: parseGwei("20"),
    maxPriorityFeePerGas: parseGwei("1"),
    signature: `0x${"11".repeat(65)}` as Hex,
  };
}

/** A transaction the engine handed to the chain, with the head it was handed over at. */
interface Sent {
  hash: Hash;
  from: Address;
  to: Address | undefined;
  value: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  atBlock: bigint;
}

interface SimulatedOptions {
  /** What becomes of each transaction. Default: mined in the next block. */
  delivery?: (transaction: { hash: Hash; sentAtBlock: bigint }) => SimulatedDelivery;
  /** Poll the chain's client for blocks on `blockPollingInterval` instead of being told of them. */
  pollForBlocks?: boolean;
  /** Never answer once the transaction is handed to the chain: the engine died there. */
  dieAfterSubmit?: boolean;
  /** Share these with another engine. */
  shared?: {
    clock: SimulatedClock;
    chain: ReturnType<typeof createSimulatedChain>;
    store: MempoolStore;
  };
  instanceId?: string;
}

/** The real engine on a simulated chain (a block every second) and clock, with `settings` on top of a manual, unsafe-validation base. */
async function simulated(settings: BundlerSettingsInput, options: SimulatedOptions = {}) {
  const clock = options.shared?.clock ?? createSimulatedClock(1_750_000_000_000);
  const chain =
    options.shared?.chain ??
    createSimulatedChain({ clock, blockTimeMs: 1_000, delivery: options.delivery });
  const store = options.shared?.store ?? createMemoryMempoolStore();
  const sent: Sent[] = [];
  const submitter: Submitter = {
    name: "simulated",
    async submit(signed) {
      const transaction = parseTransaction(signed.serialized);
      const hash = await chain.submitter.submit(signed);
      sent.push({
        hash,
        from: await recoverTransactionAddress({ serializedTransaction: signed.serialized as never }),
        to: transaction.to ? getAddress(transaction.to) : undefined,
        value: transaction.value ?? 0n,
        maxFeePerGas: transaction.maxFeePerGas!,
        maxPriorityFeePerGas: transaction.maxPriorityFeePerGas!,
        atBlock: chain.head().number,
      });
      return options.dieAfterSubmit ? new Promise<Hash>(() => {}) : hash;
    },
  };
  const requests: string[] = [];
  // The chain's client, recording what the engine asks (at the ChainClient port).
  const client = createPublicClient({
    transport: custom({
      request: (args: { method: string }) => {
        requests.push(args.method);
        return chain.client.request(args as never);
      },
    }),
    cacheTime: 0,
  }) as ChainClient;
  const bundler = await createBundler({
    client: options.pollForBlocks ? client : chain.client,
    store,
    signer: testSigner([generatePrivateKey(), generatePrivateKey()]),
    submitter,
    ...(options.pollForBlocks ? {} : { blocks: chain.blocks }),
    clock,
    instanceId: options.instanceId,
    entryPoints: [chain.entryPoint],
    // The simulated chain runs no EVM to trace: validation is simulation only.
    settings: mergeBundlerSettings({ validation: { mode: "unsafe" }, relaying: { minSignerBalance: 0n }, bundling: { mode: "manual" } }, settings),
  });
  const changes: StatusChange[] = [];
  bundler.onStatusChange((c) => changes.push(c));
  return {
    clock,
    chain,
    store,
    bundler,
    sent,
    requests,
    send: (n: number) => bundler.sendUserOperation(syntheticOperation(n), chain.entryPoint.address),
    statuses: (hash: Hash) => changes.filter((c) => c.userOpHash === hash).map((c) => c.status),
    changes,
  };
}

describe("engine settings on a simulated chain and clock", () => {
  it("bundleInterval: in auto mode the first bundle goes out once bundleInterval has passed, not before", async () => {
    const { clock, bundler, send, statuses } = await simulated({ bundling: { mode: "auto", intervalMs: 5_000 } });
    const hash = await send(1);
    bundler.start();
    await clock.advanceBy(4_500);
    expect(statuses(hash)).toEqual(["pending"]);
    await clock.advanceBy(1_000);
    expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
    await bundler.stop();
  });

  it.each(["manual", "pull"] as const)(
    "bundlingMode %s: the running engine never bundles on its own",
    async (bundlingMode) => {
      const { clock, bundler, send, statuses } = await simulated({ bundling: { mode: bundlingMode, intervalMs: 1_000 } });
      const hash = await send(1);
      bundler.start();
      await clock.advanceBy(10_000);
      expect(statuses(hash)).toEqual(["pending"]);
      await bundler.stop();
    },
  );

  it.each([
    [2_000, 11],
    [5_000, 5],
  ])(
    "blockPollingInterval %i ms: the running engine asks the node for its head %i times in 20 s",
    async (blockPollingInterval, polls) => {
      // An hour between bundling runs: only the block source asks for blocks.
      const { clock, bundler, requests } = await simulated(
        { bundling: { intervalMs: 3_600_000 }, tracking: { blockPollingIntervalMs: blockPollingInterval } },
        { pollForBlocks: true },
      );
      requests.length = 0;
      bundler.start();
      await clock.advanceBy(20_000);
      expect(requests.filter((method) => method === "eth_getBlockByNumber")).toHaveLength(polls);
      await bundler.stop();
    },
  );

  it("receiptTimeoutMs: sendBundleNow returns after receiptTimeoutMs with its bundle unmined", async () => {
    const { clock, bundler, send, statuses, sent } = await simulated(
      { bundling: { receiptTimeoutMs: 5_000 } },
      { delivery: () => ({ drop: true }) },
    );
    const hash = await send(1);
    let returned: Hash[] | undefined;
    void bundler.sendBundleNow().then((hashes) => {
      returned = hashes;
    });
    await clock.advanceBy(4_900);
    expect(returned).toBeUndefined();
    await clock.advanceBy(200);
    expect(returned).toEqual([sent[0]!.hash]);
    expect(statuses(hash)).toEqual(["pending", "submitted"]);
  });

  it.each([1, 4])(
    "bundleReplaceAfterBlocks %i: a bundle the chain never saw is replaced that many blocks after it was sent",
    async (blocks) => {
      let deliveries = 0;
      const { clock, bundler, send, sent, statuses } = await simulated(
        { tracking: { replaceAfterBlocks: blocks } },
        { delivery: () => (deliveries++ === 0 ? { drop: true } : {}) },
      );
      const hash = await send(1);
      void bundler.sendBundleNow();
      await clock.advanceBy((blocks + 2) * 1_000);
      expect(sent).toHaveLength(2);
      expect(sent[1]!.atBlock - sent[0]!.atBlock).toBe(BigInt(blocks));
      expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
    },
  );

  it("bundleFeeBumpPercent: a replacement raises both fees by that percent and one wei", async () => {
    let deliveries = 0;
    const { clock, bundler, send, sent } = await simulated(
      { tracking: { replaceAfterBlocks: 1, feeBumpPercent: 50 } },
      { delivery: () => (deliveries++ === 0 ? { drop: true } : {}) },
    );
    await send(1);
    void bundler.sendBundleNow();
    await clock.advanceBy(3_000);
    const [first, replacement] = sent;
    expect({
      maxFeePerGas: replacement!.maxFeePerGas,
      maxPriorityFeePerGas: replacement!.maxPriorityFeePerGas,
    }).toEqual({
      maxFeePerGas: (first!.maxFeePerGas * 150n) / 100n + 1n,
      maxPriorityFeePerGas: (first!.maxPriorityFeePerGas * 150n) / 100n + 1n,
    });
  });

  it("maxBundleFeePerGas: a bundle whose replacement would bid more is cancelled, and its operation goes back to the pool", async () => {
    let deliveries = 0;
    // The first bid is 2.1 gwei (twice the 1 gwei base fee, and the 0.1 gwei tip); its replacement would bid 2.415 gwei.
    const { clock, bundler, send, sent, changes } = await simulated(
      { bundling: { maxFeePerGas: parseGwei("2.2") }, tracking: { replaceAfterBlocks: 1 } },
      { delivery: () => (deliveries++ === 0 ? { drop: true } : {}) },
    );
    const hash = await send(1);
    void bundler.sendBundleNow();
    await clock.advanceBy(3_000);
    expect(sent[0]!.maxFeePerGas).toBe(parseGwei("2.1"));
    expect(sent[1]).toMatchObject({ from: sent[0]!.from, to: sent[0]!.from, value: 0n });
    expect(changes.at(-1)).toMatchObject({
      userOpHash: hash,
      status: "pending",
      reason: "its bundle was cancelled; back in the pool",
    });
  });

  it("maxBundleFeePerGas: no bundle bids above it; while the base fee is above it the operation waits", async () => {
    // The base fee is 1 gwei in the first block and falls by an eighth with each empty one: 0.449 gwei in the seventh.
    const { clock, bundler, send, sent, statuses } = await simulated({ bundling: { maxFeePerGas: parseGwei("0.5") } });
    const hash = await send(1);
    const early = bundler.sendBundleNow();
    await clock.advanceBy(6_000);
    expect(await early).toEqual([]);
    expect(sent).toEqual([]);
    await clock.advanceBy(1_000);
    const sending = bundler.sendBundleNow();
    await clock.advanceBy(1_000);
    expect(await sending).toEqual([sent[0]!.hash]);
    expect(sent[0]!.maxFeePerGas).toBe(parseGwei("0.5"));
    expect(statuses(hash)).toEqual(["pending", "submitted", "included"]);
  });

  it.each([
    [12, "follows"],
    [2, "no longer follows"],
  ])(
    "reorgDepth %i: the engine %s an inclusion that a reorg moves four blocks later",
    async (reorgDepth, what) => {
      const { clock, chain, bundler, send } = await simulated({ tracking: { reorgDepth } });
      const hash = await send(1);
      const sending = bundler.sendBundleNow();
      await clock.advanceBy(1_000);
      await sending;
      bundler.start();
      const before = (await bundler.getUserOperationByHash(hash))!.blockHash;
      await clock.advanceBy(4_000);
      const minedAt = (await bundler.getUserOperationReceipt(hash))!.receipt.blockNumber;
      chain.reorg(Number(chain.head().number - minedAt) + 1);
      await clock.advanceBy(2_000);
      const moved = (await bundler.getUserOperationReceipt(hash))!.receipt.blockHash;
      expect(moved).not.toBe(before);
      expect((await bundler.getUserOperationByHash(hash))!.blockHash).toBe(
        what === "follows" ? moved : before,
      );
      await bundler.stop();
    },
  );

  it.each([
    [5_000, "adopts it and finds it included"],
    [60_000, "leaves it to its engine"],
  ])(
    "bundleClaimLeaseMs %i: 6 s after an engine died having sent a bundle, a peer %s",
    async (bundleClaimLeaseMs, what) => {
      const dead = await simulated(
        { bundling: { claimLeaseMs: bundleClaimLeaseMs } },
        { dieAfterSubmit: true, instanceId: "dead" },
      );
      const hash = await dead.send(1);
      void dead.bundler.sendBundleNow();
      await dead.clock.advanceBy(6_000);
      const peer = await simulated({  }, { shared: dead, instanceId: "peer" });
      await peer.bundler.sendBundleNow();
      expect((await peer.store.get(hash))?.status).toBe(
        what.startsWith("adopts") ? "included" : "submitted",
      );
    },
  );

  describe("reputation: an entity seen in 240 operations, none included", () => {
    const entity = keccak256(toHex("an entity")).slice(0, 42) as Address;
    it.each<[BundlerSettings["reputation"] | object, string]>([
      [{}, "throttled"],
      [{ minInclusionDenominator: 2 }, "banned"],
      [{ throttlingSlack: 30 }, "ok"],
      [{ banSlack: 20 }, "banned"],
    ])("with %o is %s", async (reputation, status) => {
      const { bundler, chain } = await simulated({ reputation });
      await bundler.setReputation(chain.entryPoint.address, [
        { address: entity, opsSeen: 240, opsIncluded: 0 },
      ]);
      expect((await bundler.dumpReputation(chain.entryPoint.address))[0]).toMatchObject({ status });
    });
  });
});

describe("engine settings on the devnet", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  let workloads: Address;
  const engines: Bundler[] = [];
  beforeAll(async () => {
    fx = await engineFixture();
    workloads = await deployGasWorkloads(fx.devnet);
  });
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.stop();
  });
  afterAll(() => fx?.devnet.stop());

  async function engine(
    settings: BundlerSettingsInput = {},
    client: ChainClient = fx.client as unknown as ChainClient,
  ) {
    const bundler = await createBundler({
      client,
      store: createMemoryMempoolStore(),
      signer: testSigner(fx.devnet.relayerKeys),
      // Validation on the main thread unless a test asks for workers: starting them costs more than the few validations here.
      settings: mergeBundlerSettings({ bundling: { mode: "manual" }, validation: { tracerWorkers: 0 } }, settings),
    });
    engines.push(bundler);
    return bundler;
  }

  const recipient = () => privateKeyToAccount(generatePrivateKey()).address;

  /** A v0.7 operation of `account` making `call`, gas fields zero, as a client sends it to be estimated. */
  async function draft(
    account: SmartAccount,
    call: { to: Address; value?: bigint; data?: Hex },
    paymaster?: { paymaster: Address; paymasterData: Hex },
  ) {
    const deployed = (await fx.client.getCode({ address: account.address })) !== undefined;
    return {
      sender: account.address,
      nonce: await account.getNonce({ key: 0n }),
      ...(deployed ? {} : await account.getFactoryArgs()),
      callData: await account.encodeCalls([call]),
      ...unestimatedGas,
      signature: await account.getStubSignature(),
      ...paymaster,
    } as UserOperationV07;
  }

  /** `draft` with `bundler`'s estimate, signed. */
  async function estimated(bundler: Bundler, account: SmartAccount, op: UserOperationV07) {
    const filled = {
      ...op,
      ...(await bundler.estimateUserOperationGas(op, account.entryPoint.address)),
    };
    return {
      ...filled,
      signature: await account.signUserOperation({
        ...filled,
        chainId: fx.devnet.chainId,
      } as never),
    } as UserOperationV07;
  }

  it("gasPriceMarkup: the fee suggestion is that percent above the node's", async () => {
    const [plain, marked] = [await engine(), await engine({ gas: { gasPriceMarkupPercent: 50 } })];
    const [base, raised] = [await plain.getGasPrice(), await marked.getGasPrice()];
    expect(raised).toEqual({
      baseFeePerGas: base.baseFeePerGas,
      maxFeePerGas: (base.maxFeePerGas * 150n) / 100n,
      maxPriorityFeePerGas: (base.maxPriorityFeePerGas * 150n) / 100n,
    });
  });

  it("pvgMarkup: the estimated preVerificationGas is that percent above the calculated one", async () => {
    const account = await fx.makeAccount("0.7");
    const op = await draft(account, { to: recipient(), value: 1n });
    const unmarked = await (await engine({ gas: { preVerificationGasMarkupPercent: 0 } })).estimateUserOperationGas(
      op,
      account.entryPoint.address,
    );
    const marked = await (await engine({ gas: { preVerificationGasMarkupPercent: 20 } })).estimateUserOperationGas(
      op,
      account.entryPoint.address,
    );
    expect(marked.preVerificationGas).toBe((unmarked.preVerificationGas * 120n) / 100n);
  });

  it("estimationGasMarkupPercent: each estimated limit is that percent above the least its phase takes", async () => {
    const account = await fx.makeAccount("0.7");
    const op = await draft(account, { to: recipient(), value: 1n });
    const least = await (await engine({ gas: { estimationMarkupPercent: 0 } })).estimateUserOperationGas(
      op,
      account.entryPoint.address,
    );
    const marked = await (
      await engine({ gas: { estimationMarkupPercent: 10 } })
    ).estimateUserOperationGas(op, account.entryPoint.address);
    expect({
      verificationGasLimit: marked.verificationGasLimit,
      callGasLimit: marked.callGasLimit,
    }).toEqual({
      verificationGasLimit: least.verificationGasLimit + (least.verificationGasLimit * 10n) / 100n,
      callGasLimit: least.callGasLimit + (least.callGasLimit * 10n) / 100n,
    });
  });

  it("estimationStaticBuffer: each estimated limit is that much gas above the least its phase takes", async () => {
    const account = await fx.makeAccount("0.7");
    const op = await draft(account, { to: recipient(), value: 1n });
    const least = await (await engine({ gas: { estimationMarkupPercent: 0 } })).estimateUserOperationGas(
      op,
      account.entryPoint.address,
    );
    const buffered = await (
      await engine({ gas: { estimationMarkupPercent: 0, estimationStaticBuffer: 5_000n } })
    ).estimateUserOperationGas(op, account.entryPoint.address);
    expect({
      verificationGasLimit: buffered.verificationGasLimit,
      callGasLimit: buffered.callGasLimit,
    }).toEqual({
      verificationGasLimit: least.verificationGasLimit + 5_000n,
      callGasLimit: least.callGasLimit + 5_000n,
    });
  });

  it("validationGasLimit: an operation asking for more verification gas is refused with -32602, and estimation searches no higher", async () => {
    const account = await fx.makeAccount("0.7");
    // Deploying a SimpleAccount takes about 225,000 gas of verification.
    const op = await estimated(
      await engine(),
      account,
      await draft(account, { to: recipient(), value: 1n }),
    );
    const limited = await engine({ gas: { validationGasLimit: 200_000n } });
    const refused = await rejection(limited.sendUserOperation(op, account.entryPoint.address));
    expect(refused.code).toBe(RpcErrorCode.invalidParams);
    expect(refused.message).toContain(
      `${op.verificationGasLimit} is above the bundler's limit of 200000`,
    );
    const unestimable = await rejection(
      limited.estimateUserOperationGas(
        await draft(account, { to: recipient(), value: 1n }),
        account.entryPoint.address,
      ),
    );
    expect(unestimable.code).toBe(RpcErrorCode.entryPointRejected);
  });

  it("executionGasLimit: a call needing more gas than it is answered as reverting (-32521)", async () => {
    const account = await fx.makeAccount("0.7");
    const op = await draft(account, {
      to: workloads,
      data: encodeFunctionData({
        abi: gasWorkloadsAbi,
        functionName: "requireGas",
        args: [400_000n],
      }),
    });
    expect(
      (await (await engine()).estimateUserOperationGas(op, account.entryPoint.address))
        .callGasLimit,
    ).toBeGreaterThan(400_000n);
    const error = await rejection(
      (await engine({ gas: { executionGasLimit: 300_000n } })).estimateUserOperationGas(
        op,
        account.entryPoint.address,
      ),
    );
    expect(error.code).toBe(RpcErrorCode.executionReverted);
  });

  it("bundleGasLimitMarkup: the bundle transaction's gas limit is the node's estimate of it plus that percent", async () => {
    const bundler = await engine({ bundling: { gasLimitMarkupPercent: 50 } });
    const account = await fx.makeAccount("0.7");
    await bundler.sendUserOperation(
      await estimated(bundler, account, await draft(account, { to: recipient(), value: 1n })),
      account.entryPoint.address,
    );
    const [hash] = await bundler.sendBundleNow();
    const transaction = await fx.client.getTransaction({ hash: hash! });
    const estimate = await fx.client.estimateGas({
      account: transaction.from,
      to: transaction.to!,
      data: transaction.input,
      blockNumber: transaction.blockNumber! - 1n,
    });
    expect(transaction.gas).toBe((estimate * 150n) / 100n);
  });

  describe("the devnet's staked PostOpWork paymaster, whose validation returns a context (EREP-050)", () => {
    const paymaster = () => fx.devnet.deployments["0.7"].paymasters.postOpWork!;

    /** An operation of a new account, paid for by the paymaster. */
    async function sponsored() {
      const account = await fx.makeAccount("0.7", 0n);
      const sponsor = { paymaster: paymaster(), paymasterData: "0x00000000" as Hex };
      return {
        account,
        op: await estimated(
          await engine(),
          account,
          await draft(account, { to: recipient(), value: 0n }, sponsor),
        ),
      };
    }

    it.each<[string, (stake: StakeStatus) => BundlerSettingsInput]>([
      ["minStake", (stake) => ({ reputation: { minStake: stake.stake + 1n } })],
      ["minUnstakeDelaySeconds", (stake) => ({ reputation: { minUnstakeDelaySeconds: Number(stake.unstakeDelaySec) + 1 } })],
    ])(
      "%s above the paymaster's own leaves its stake short: its operation is refused with -32505",
      async (_setting, config) => {
        const { account, op } = await sponsored();
        const plain = await engine();
        const stake = await plain.getStakeStatus(paymaster(), account.entryPoint.address);
        expect(stake.isStaked).toBe(true);
        const error = await rejection(
          (await engine(config(stake))).sendUserOperation(op, account.entryPoint.address),
        );
        expect(error.code).toBe(RpcErrorCode.stakeTooLow);
        expect(error.data).toMatchObject({ paymaster: paymaster(), rule: "EREP-050" });
        await expect(plain.sendUserOperation(op, account.entryPoint.address)).resolves.toMatch(
          /^0x[0-9a-f]{64}$/,
        );
      },
    );
  });

  it.each<[BundlerSettings["validation"]["mode"], string]>([
    ["safe", "refused with -32502 (OP-011)"],
    ["unsafe", "admitted"],
  ])(
    "validationMode %s: an account reading block.timestamp in validation is %s",
    async (validationMode) => {
      const deployer = createWalletClient({
        chain: fx.devnet.chain,
        transport: http(fx.devnet.rpcUrl),
        account: privateKeyToAccount(fx.devnet.accountKeys.at(-2)!),
      });
      const probes = await deployRuleProbes(fx.client as never, deployer as never, "0.7");
      const sender = await probes.deployAccount(1n);
      const op: UserOperationV07 = {
        sender,
        nonce: 0n,
        callData: encodeFunctionData({
          abi: parseAbi(["function execute()"]),
          functionName: "execute",
        }),
        callGasLimit: 50_000n,
        verificationGasLimit: 1_500_000n,
        preVerificationGas: 300_000n,
        maxFeePerGas: parseGwei("20"),
        maxPriorityFeePerGas: parseGwei("1"),
        signature: toHex("TIMESTAMP"),
      };
      const admission = (await engine({ validation: { mode: validationMode } })).sendUserOperation(op, probes.entryPoint);
      if (validationMode === "unsafe")
        return expect(admission).resolves.toMatch(/^0x[0-9a-f]{64}$/);
      const error = await rejection(admission);
      expect(error.code).toBe(RpcErrorCode.opcodeOrStorageRule);
      expect(error.message).toMatch(/uses banned opcode TIMESTAMP \(OP-011\)/);
    },
  );

  it.each<[BundlerSettings["validation"]["tracer"], number]>([
    ["in-process", 0],
    ["js", 1],
  ])(
    "validationTracer %s: admitting an operation runs the ERC-7562 JavaScript collector on the node %i times",
    async (validationTracer, jsTraces) => {
      const tracers: unknown[] = [];
      const recording = createPublicClient({
        chain: fx.devnet.chain,
        transport: custom({
          request: (args: { method: string; params?: unknown[] }) => {
            if (args.method === "debug_traceCall")
              tracers.push((args.params?.[2] as { tracer?: unknown })?.tracer);
            return fx.client.request(args as never);
          },
        }),
      });
      const bundler = await engine({ validation: { tracer: validationTracer } }, recording as unknown as ChainClient);
      const account = await fx.makeAccount("0.7");
      await bundler.sendUserOperation(
        await estimated(bundler, account, await draft(account, { to: recipient(), value: 1n })),
        account.entryPoint.address,
      );
      // Both fetch the prestate with the node's prestateTracer; only js runs its own collector there.
      expect(tracers).toContain("prestateTracer");
      expect(tracers.filter((tracer) => tracer !== "prestateTracer")).toHaveLength(jsTraces);
    },
  );

  it.each([
    [3, 3],
    [0, 0],
  ])(
    "tracerWorkers %i: the engine's validation runs on %i worker threads",
    async (tracerWorkers, threads) => {
      let started = 0;
      const count = () => started++;
      process.on("worker", count);
      try {
        const bundler = await engine({ validation: { tracerWorkers } });
        const account = await fx.makeAccount("0.7");
        await bundler.sendUserOperation(
          await estimated(bundler, account, await draft(account, { to: recipient(), value: 1n })),
          account.entryPoint.address,
        );
      } finally {
        process.off("worker", count);
      }
      expect(started).toBe(threads);
    },
  );
});
