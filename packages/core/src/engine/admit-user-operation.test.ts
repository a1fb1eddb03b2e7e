import {
  type Abi,
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  parseEther,
  slice,
  toFunctionSelector,
  zeroAddress,
} from "viem";
import { getUserOperationHash } from "viem/account-abstraction";
import { describe, expect, it } from "vitest";
import { createEntryPointRegistry } from "../entrypoint/registry.ts";
import { entryPointRefusal, PaymasterRejectionError } from "../errors/errors.ts";
import { canonicalEntryPoints } from "../entrypoint/version.ts";
import type { GasPrice } from "../gas/fee-oracle.ts";
import { createDefaultMempoolPolicy } from "../mempool/default-mempool-policy.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { silentLogger } from "../ports/logger.ts";
import type { MempoolStore, NewMempoolEntry } from "../ports/mempool-store.ts";
import type { Simulator } from "../ports/simulator.ts";
import { createReputation } from "../reputation/reputation.ts";
import type { StatusChange } from "../status/status-change.ts";
import { createMemoryMempoolStore } from "../mempool/memory-mempool-store.ts";
import { createMemoryReputationStore } from "../reputation/memory-reputation-store.ts";
import {
  type FixtureEntryOptions,
  fixtureAccount,
  fixtureChainId,
  fixtureEntry,
  fixtureFactory,
  fixturePaymaster,
  replacingNothing,
} from "../../../testing/src/index.ts";
import type { UserOperation, UserOperationV07 } from "../userop/types.ts";
import type { ValidationResult } from "../ports/validation-result.ts";
import type { ValidationTrace } from "../ports/validation-trace.ts";
import { type AdmissionContext, admitUserOperation } from "./admission.ts";
import { answered, onWire } from "../../test/on-wire.ts";
import { type BundlerSettingsInput, resolveBundlerSettings } from "./settings.ts";

/**
 * Admission (`admitUserOperation`) with every port faked at its boundary: the node answers code,
 * nonces and deposits; the simulator answers a fixed validation result. The stores, the policy and
 * reputation are the real ones.
 */
const entryPoint = canonicalEntryPoints["0.7"];
const now = 1_750_000_000_000;
const unstaked = { stake: 0n, unstakeDelaySec: 0n };
const staked = { stake: parseEther("1"), unstakeDelaySec: 86_400n };
const valid = {
  aggregator: zeroAddress,
  signatureFailed: false,
  validAfter: 0n,
  validUntil: (1n << 48n) - 1n,
};
const delegation = (to: Address) => `0xef0100${to.slice(2)}` as Hex;
const otherDelegate: Address = "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B";
const stores = "0x4444444444444444444444444444444444444444";
/** What safe validation traced: no phase, one code hash, storage of one contract. */
const trace: ValidationTrace = {
  phases: [
    {
      to: "0x1",
      selector: "0x",
      opcodes: {},
      storage: { [stores]: {} },
      transientStorage: {},
      calls: [],
      codeAccesses: [],
      creates: [],
      outOfGas: false,
    },
  ],
  keccakInputs: [],
  codeHashes: { [stores]: "0x1234" },
};

interface Setup {
  mode?: "safe" | "unsafe";
  settings?: BundlerSettingsInput;
  /** The validation result's fields, over a valid unstaked one. */
  result?: Partial<ValidationResult>;
  gasPrice?: Partial<GasPrice>;
  maxBundleGas?: bigint;
  /** The paymaster's EntryPoint deposit. Default 1,000 ETH. */
  deposit?: bigint;
  /** Code at addresses (default: a contract). */
  code?: Record<Address, Hex>;
  store?: MempoolStore;
  /** preVerificationGas an L2 adds for the L1 data fee. Default none (L1). */
  l1DataGas?: AdmissionContext["l1DataGas"];
  /** What the simulation fails with, instead of answering. */
  simulationError?: Error;
}

function setup(options: Setup = {}) {
  const store = options.store ?? createMemoryMempoolStore();
  const reputationStore = createMemoryReputationStore();
  const settings = resolveBundlerSettings(options.settings);
  const mode = options.mode ?? "safe";
  const events: StatusChange[] = [];
  const simulated: UserOperation[] = [];
  const client = {
    getCode: async ({ address }: { address: Address }) => options.code?.[address] ?? "0x6080",
    getTransactionCount: async () => 12,
    // The EntryPoint's deposits: only the fixture paymaster has one.
    readContract: async ({
      address,
      abi,
      functionName,
      args,
    }: {
      address: Address;
      abi: Abi;
      functionName: string;
      args: unknown[];
    }) => {
      const data = encodeFunctionData({ abi, functionName, args });
      if (address !== entryPoint || slice(data, 0, 4) !== toFunctionSelector("balanceOf(address)"))
        throw new Error(`unexpected call ${data} to ${address}`);
      const [account] = decodeFunctionData({ abi, data }).args as [Address];
      return account === fixturePaymaster ? (options.deposit ?? parseEther("1000")) : 0n;
    },
  } as unknown as ChainClient;
  const simulator: Simulator = {
    mode,
    tracer: mode === "safe" ? "in-process" : undefined,
    async simulateValidation(_entryPoint, op) {
      simulated.push(op);
      if (options.simulationError) throw options.simulationError;
      const validation: ValidationResult = {
        preOpGas: op.preVerificationGas + 30_000n,
        prefund: 0n,
        account: valid,
        paymaster: undefined,
        paymasterContext: "0x",
        sender: unstaked,
        factory: unstaked,
        paymasterStake: unstaked,
        ...options.result,
      };
      return { validation, trace: mode === "safe" ? trace : undefined };
    },
    close: async () => {},
  };
  const gasPrice: GasPrice = {
    maxFeePerGas: 30_000_000_000n,
    maxPriorityFeePerGas: 1_500_000_000n,
    baseFeePerGas: 20_000_000_000n,
    ...options.gasPrice,
  };
  const context: AdmissionContext = {
    client,
    simulator,
    chainId: fixtureChainId,
    store,
    policy: createDefaultMempoolPolicy(),
    reputation: createReputation(reputationStore, store, settings.reputation),
    entryPoints: createEntryPointRegistry(),
    feeOracle: { getGasPrice: async () => gasPrice },
    clock: { now: () => now, setTimeout: () => ({ cancel() {} }) },
    logger: silentLogger,
    emit: (change) => events.push(change),
    settings,
    maxBundleGas: options.maxBundleGas ?? 30_000_000n,
    l1DataGas: options.l1DataGas,
  };
  return {
    store,
    reputationStore,
    events,
    simulated,
    admit: (op: UserOperation, at: Address = entryPoint) => admitUserOperation(context, op, at),
  };
}

/** A fixture operation with enough preVerificationGas for its calldata, and a post-op limit that fits a bundle. */
async function operation(options: FixtureEntryOptions = {}): Promise<UserOperationV07> {
  const op = (await fixtureEntry({ version: options.version ?? "0.7", ...options }))
    .userOperation as UserOperationV07;
  return {
    ...op,
    preVerificationGas: 100_000n,
    ...(op.paymaster ? { paymasterPostOpGasLimit: 50_000n } : {}),
  };
}
const hashOf = (op: UserOperation, version: "0.7" | "0.8" | "0.9" = "0.7") =>
  getUserOperationHash({
    userOperation: op as never,
    entryPointAddress: canonicalEntryPoints[version],
    entryPointVersion: version,
    chainId: fixtureChainId,
  });
/** A pooled entry for `op`, as admission would have stored it. */
const pooled = (op: UserOperation, version: "0.7" | "0.8" | "0.9" = "0.7"): NewMempoolEntry => ({
  userOpHash: hashOf(op, version),
  entryPoint: canonicalEntryPoints[version],
  entryPointVersion: version,
  userOperation: op,
  receivedAt: now - 1,
});

describe("admitting an operation", () => {
  it("stores a valid operation pending under its hash, with what safe validation learned, and tells listeners", async () => {
    const { admit, store, events } = setup();
    const op = await operation();
    const hash = await admit(op);
    expect(hash).toBe(hashOf(op));
    expect(await store.get(hash)).toEqual({
      userOpHash: hash,
      entryPoint,
      entryPointVersion: "0.7",
      userOperation: op,
      receivedAt: now,
      status: "pending",
      updatedAt: now,
      validation: { codeHashes: { [stores]: "0x1234" }, storageContracts: [stores] },
    });
    expect(events).toEqual([{ userOpHash: hash, status: "pending" }]);
  });

  it("records which entities were staked, and counts a staked sender as seen", async () => {
    const { admit, store, reputationStore } = setup({
      result: { sender: staked, paymasterStake: staked },
    });
    const op = await operation({ sponsored: true });
    const hash = await admit(op);
    expect((await store.get(hash))?.validation?.staked).toEqual(["account", "paymaster"]);
    const seen = await reputationStore.get(entryPoint, [
      op.sender,
      fixtureFactory,
      fixturePaymaster,
    ]);
    expect(seen.map((e) => e.opsSeen)).toEqual([1, 1, 1]);
  });

  it("an unstaked sender is not counted as seen (ERC-7562 limits it by count instead)", async () => {
    const { admit, reputationStore } = setup();
    const op = await operation({ sponsored: true });
    await admit(op);
    expect(await reputationStore.get(entryPoint, [op.sender])).toEqual([]);
  });

  it("in unsafe mode keeps no validation facts", async () => {
    const { admit, store } = setup({ mode: "unsafe" });
    const hash = await admit(await operation());
    expect(await store.get(hash)).not.toHaveProperty("validation");
  });

  it("keeps the size of the paymaster's context, when it returns one (LIM-050)", async () => {
    const { admit, store } = setup({
      result: { paymasterContext: "0x123456", paymasterStake: staked },
    });
    const hash = await admit(await operation({ sponsored: true }));
    expect((await store.get(hash))?.paymasterContextSize).toBe(3);
    const without = setup();
    expect(
      await without.store.get(await without.admit(await operation({ sponsored: true }))),
    ).not.toHaveProperty("paymasterContextSize");
  });

  it("refuses an operation whose gas limits could never fit a bundle (-32602), before simulating it", async () => {
    const op = await operation();
    // (100,000 + 1,250,000 + 85,000 + 10,000) × 64 / 63 = 1,467,936.5…
    const fits = setup({ maxBundleGas: 1_467_936n });
    await expect(fits.admit(op)).resolves.toBe(hashOf(op));
    const { admit, simulated } = setup({ maxBundleGas: 1_467_935n });
    await expect(answered(admit(op))).rejects.toMatchObject({
      code: -32602,
      message:
        "invalid gas limits: the operation's gas limits add up to 1467936 gas in a bundle, above maxBundleGas 1467935; it could never be bundled",
    });
    expect(simulated).toEqual([]);
  });

  it("refuses an operation that fails the prechecks (-32602), before simulating it", async () => {
    const { admit, simulated } = setup();
    const op = await operation();
    await expect(answered(
      admit({ ...op, maxPriorityFeePerGas: op.maxFeePerGas + 1n }),
    )).rejects.toMatchObject({
      code: -32602,
      message: "invalid maxPriorityFeePerGas: is higher than maxFeePerGas",
    });
    expect(simulated).toEqual([]);
  });

  it("on an L2, requires the L1 data fee's gas on top of preVerificationGas (-32602)", async () => {
    const asked: [Address, UserOperation][] = [];
    const l1DataGas = async (at: { address: Address }, op: UserOperation) => {
      asked.push([at.address, op]);
      return 10_000_000n;
    };
    const op = await operation();
    await expect(answered(setup({ l1DataGas }).admit(op))).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /^invalid preVerificationGas: too low: expected at least \d+ \(10000000 of it for the L1 data fee\), provided only 100000$/,
      ),
    });
    expect(asked).toEqual([[entryPoint, op]]);
    await expect(setup({ l1DataGas: async () => 0n }).admit(op)).resolves.toBe(hashOf(op));
  });

  it("refuses an operation already known (-32602)", async () => {
    const { admit } = setup();
    const op = await operation();
    await admit(op);
    await expect(answered(admit(op))).rejects.toMatchObject({
      code: -32602,
      message: `user operation ${hashOf(op)} is already known`,
    });
  });

  it("admits again an operation that left the pool unsent (dropped) or whose bundle was mined without it (failed)", async () => {
    const { admit, store, events } = setup();
    const dropped = await operation();
    const failed = await operation({ sender: 1 });
    const hashes = [await admit(dropped), await admit(failed)];
    await store.drop([hashes[0]!], "expired", now);
    await store.markFailed([hashes[1]!], "bundle transaction reverted", now);
    expect([await admit(dropped), await admit(failed)]).toEqual(hashes);
    for (const hash of hashes) expect((await store.get(hash))?.status).toBe("pending");
    expect(events.filter((e) => e.status === "pending")).toHaveLength(4);
  });

  it("refuses a maxFeePerGas below the current base fee (-32602); equal is enough", async () => {
    const op = await operation();
    await expect(setup({ gasPrice: { baseFeePerGas: op.maxFeePerGas } }).admit(op)).resolves.toBe(
      hashOf(op),
    );
    await expect(answered(
      setup({ gasPrice: { baseFeePerGas: op.maxFeePerGas + 1n } }).admit(op),
    )).rejects.toMatchObject({
      code: -32602,
      message: `invalid maxFeePerGas: ${op.maxFeePerGas} is below the current base fee ${op.maxFeePerGas + 1n}`,
    });
  });

  it("holds fees to the oracle's suggestion only with enforceGasPrice", async () => {
    const op = await operation();
    const gasPrice = { maxPriorityFeePerGas: op.maxPriorityFeePerGas * 2n };
    await expect(setup({ gasPrice }).admit(op)).resolves.toBe(hashOf(op));
    await expect(answered(
      setup({ gasPrice, settings: { gas: { enforceGasPrice: true } } }).admit(op),
    )).rejects.toMatchObject({ code: -32602, data: { field: "maxPriorityFeePerGas" } });
  });

  it("refuses a banned entity before simulating (-32504)", async () => {
    const { admit, reputationStore, simulated } = setup();
    await reputationStore.set(entryPoint, [
      { address: fixturePaymaster, opsSeen: 510, opsIncluded: 0 },
    ]);
    await expect(answered(admit(await operation({ sponsored: true })))).rejects.toMatchObject({
      code: -32504,
      message: `paymaster ${fixturePaymaster} is banned`,
    });
    expect(simulated).toEqual([]);
  });

  it.each([
    ["on L1", undefined],
    ["on an L2, with an L1 data fee", async () => 1_000n],
  ])("names the paymaster the simulation blames (AA3x) %s", async (_, l1DataGas) => {
    const { admit } = setup({ simulationError: entryPointRefusal("AA33 reverted"), l1DataGas });
    const error = await admit(await operation({ sponsored: true })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymasterRejectionError);
    expect(error).toMatchObject({ reason: "AA33 reverted", paymaster: fixturePaymaster });
  });

  it("refuses an unstaked paymaster over its UREP-020 allowance (-32504), a staked one is not limited", async () => {
    const fill = async (store: MempoolStore) => {
      for (let sender = 1; sender <= 10; sender++)
        await store.admit(pooled(await operation({ sponsored: true, sender })), replacingNothing);
    };
    const limited = setup({ result: { factory: staked } });
    await fill(limited.store);
    await expect(answered(limited.admit(await operation({ sponsored: true })))).rejects.toMatchObject({
      code: -32504,
      data: { paymaster: fixturePaymaster, limit: 10 },
    });
    const stakedPaymaster = setup({ result: { factory: staked, paymasterStake: staked } });
    await fill(stakedPaymaster.store);
    await expect(
      stakedPaymaster.admit(await operation({ sponsored: true })),
    ).resolves.toBeDefined();
  });
});

describe("rules only safe validation checks", () => {
  it.each(["safe", "unsafe"] as const)(
    "%s: a paymaster that is an EIP-7702 account (AUTH-020)",
    async (mode) => {
      const { admit } = setup({ mode, code: { [fixturePaymaster]: delegation(otherDelegate) } });
      const admitted = admit(await operation({ sponsored: true }));
      if (mode === "safe")
        await expect(answered(admitted)).rejects.toMatchObject({ code: -32502, data: { rule: "AUTH-020" } });
      else await expect(admitted).resolves.toBeDefined();
    },
  );

  it.each(["safe", "unsafe"] as const)(
    "%s: a second EIP-7702 delegate for one sender in the pool (AUTH-040)",
    async (mode) => {
      const { admit, store } = setup({ mode });
      const first = await operation({ version: "0.8", eip7702: true });
      await store.admit(
        pooled(
          { ...first, authorization: { ...first.authorization!, address: otherDelegate } },
          "0.8",
        ), replacingNothing);
      const admitted = admit(
        await operation({ version: "0.8", eip7702: true, nonce: 1n }),
        canonicalEntryPoints["0.8"],
      );
      if (mode === "safe")
        await expect(answered(admitted)).rejects.toMatchObject({ code: -32502, data: { rule: "AUTH-040" } });
      else await expect(admitted).resolves.toBeDefined();
    },
  );

  it("safe: of two concurrent EIP-7702 operations of one sender with different delegates, admits one (AUTH-040)", async () => {
    const { admit, store } = setup();
    const first = await operation({ version: "0.8", eip7702: true });
    const second = await operation({ version: "0.8", eip7702: true, nonce: 1n });
    const { yParity, ...signed } = await fixtureAccount(0).signAuthorization({ address: otherDelegate, chainId: fixtureChainId, nonce: 12 });
    const settled = await Promise.allSettled([
      admit(first, canonicalEntryPoints["0.8"]),
      admit({ ...second, authorization: { ...signed, yParity: yParity ?? 0 } }, canonicalEntryPoints["0.8"]),
    ]);
    expect(settled.map((s) => s.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = settled.find((s) => s.status === "rejected");
    expect(onWire(refused?.reason)).toMatchObject({ code: -32502, data: { rule: "AUTH-040" } });
    expect(await store.countByStatus()).toMatchObject({ pending: 1 });
  });

  it.each(["safe", "unsafe"] as const)(
    "%s: a sender that is the paymaster of a pooled operation (STO-040)",
    async (mode) => {
      const { admit, store } = setup({ mode });
      const op = await operation();
      const other = await operation({ sponsored: true, sender: 1 });
      await store.admit(pooled({ ...other, paymaster: op.sender }), replacingNothing);
      const admitted = admit(op);
      if (mode === "safe")
        await expect(answered(admitted)).rejects.toMatchObject({ code: -32502, data: { rule: "STO-040" } });
      else await expect(admitted).resolves.toBe(hashOf(op));
    },
  );

  it.each(["safe", "unsafe"] as const)(
    "%s: an unstaked paymaster that returns a context (EREP-050)",
    async (mode) => {
      const { admit } = setup({ mode, result: { paymasterContext: "0x1234" } });
      const admitted = admit(await operation({ sponsored: true }));
      if (mode === "safe")
        await expect(answered(admitted)).rejects.toMatchObject({ code: -32502, data: { rule: "EREP-050" } });
      else await expect(admitted).resolves.toBeDefined();
    },
  );
});

describe("a paymaster's deposit covers its operations in the pool and this one (AA31, -32508)", () => {
  it("admits an operation whose paymaster's deposit covers its max cost exactly; refuses it one wei short", async () => {
    const op = await operation({ sponsored: true });
    // (100,000 + 85,000 + 1,250,000 + 70,000 + 50,000) × 31,000,000,017 wei.
    const cost = 1_555_000n * 31_000_000_017n;
    await expect(setup({ deposit: cost }).admit(op)).resolves.toBe(hashOf(op));
    await expect(answered(setup({ deposit: cost - 1n }).admit(op))).rejects.toMatchObject({
      code: -32508,
      message: `AA31 paymaster deposit too low: paymaster ${fixturePaymaster} deposit of ${cost - 1n} wei cannot cover its 0 operations in the mempool and this one: they may cost up to ${cost} wei`,
    });
  });

  it("counts the paymaster's other pooled operations, the sender's next nonce too, not the one replaced, nor those naming it only as factory", async () => {
    const op = await operation({ sponsored: true });
    const cost = 1_555_000n * 31_000_000_017n;
    const other = await operation({ sponsored: true, sender: 1 });
    // Queued behind `op`, which deploys the sender: without the factory (AA10 otherwise).
    const next = { ...(await operation({ sponsored: true, nonce: 1n })), factory: undefined, factoryData: undefined };
    const asFactory = {
      ...(await operation({ sender: 2 })),
      factory: fixturePaymaster,
      factoryData: "0x" as Hex,
    };
    const replaced = {
      ...op,
      maxFeePerGas: op.maxFeePerGas - 10_000_000_000n,
      maxPriorityFeePerGas: op.maxPriorityFeePerGas / 2n,
    };
    const fill = async (store: MempoolStore) => {
      for (const pooledOp of [other, next, asFactory, replaced]) await store.admit(pooled(pooledOp), replacingNothing);
    };
    const enough = setup({ deposit: 3n * cost });
    await fill(enough.store);
    await expect(enough.admit(op)).resolves.toBe(hashOf(op));
    const short = setup({ deposit: 3n * cost - 1n });
    await fill(short.store);
    await expect(answered(short.admit(op))).rejects.toMatchObject({
      code: -32508,
      message: expect.stringContaining("cannot cover its 2 operations in the mempool"),
    });
  });
});

describe("replacing a pooled operation", () => {
  it("swaps it for the replacement, drops it as replaced, and moves its seen count", async () => {
    const { admit, store, events, reputationStore } = setup();
    const first = await operation({ sponsored: true });
    const second = {
      ...first,
      maxFeePerGas: first.maxFeePerGas * 2n,
      maxPriorityFeePerGas: first.maxPriorityFeePerGas * 2n,
    };
    const firstHash = await admit(first);
    const secondHash = await admit(second);
    expect(events).toEqual([
      { userOpHash: firstHash, status: "pending" },
      { userOpHash: firstHash, status: "dropped", reason: `replaced by ${secondHash}` },
      { userOpHash: secondHash, status: "pending" },
    ]);
    expect((await store.get(firstHash))?.status).toBe("dropped");
    expect((await store.get(secondHash))?.status).toBe("pending");
    expect((await reputationStore.get(entryPoint, [fixturePaymaster]))[0]?.opsSeen).toBe(1);
  });

});
