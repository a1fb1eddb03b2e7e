import { randomBytes } from "node:crypto";
import {
  deployGasWorkloads,
  type EntryPointVersion,
  gasWorkloadsAbi,
  SIMPLE_7702_ACCOUNT,
} from "@bundlekit/devnet";
import {
  type Address,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  hexToBytes,
  http,
  numberToHex,
  parseEther,
  toHex,
} from "viem";
import { type SmartAccount, toSimple7702SmartAccount } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { defineEntryPoint } from "../src/entrypoint/registry.ts";
import {
  decodeUserOperationEvent,
  userOperationEventTopic,
} from "../src/receipt/user-operation-event.ts";
import { toEntryPointStruct } from "../src/userop/pack.ts";
import {
  isUserOperationV06,
  type UserOperation,
  type UserOperationV07,
} from "../src/userop/types.ts";
import { engineFixture, unestimatedGas } from "./fixtures.ts";

/**
 * Every estimate has a ceiling as well as a floor, measured on the real chain. A gas limit is
 * compared with the least limit at which its phase succeeds in `handleOps` (found by bisection
 * with `eth_call` on the state the bundle is mined on, the operation re-signed at each limit).
 * preVerificationGas is compared with what the operation's bundle really cost beyond what the
 * EntryPoint metered for it (see `unmeteredCost`).
 */

/**
 * An estimated call or postOp limit is at most 1.06× the least the chain takes: the estimator adds
 * 3 % (`estimationGasMarkupPercent`) to what its search finds (measured: 1.030–1.033 for calls,
 * 1.050 for postOp, whose probe adds its own work).
 */
const executionCeilingPercent = 106n;
/**
 * A verification limit is at most 1.15× the least the chain takes. Measured: 1.04–1.05 for an
 * account it deploys, up to 1.13 for a deployed one with an EntryPoint deposit: the search runs at
 * the largest limits, whose prefund the deposit does not cover, so the account pays it (gas it
 * does not spend on chain). An EIP-7702 sender is searched cold (its delegation by state
 * override), warm on chain: 1.11.
 */
const verificationCeilingPercent = 115n;
/** Calibration slack of preVerificationGas above the bundle's per-operation cost, besides `pvgMarkup` (5 %). */
const pvgCalibrationGas = 1_000n;
/** The chain refunds this much of an EIP-7702 authorization's 25,000 gas when the EOA already exists; preVerificationGas charges all of it. */
const authorizationRefund = 12_500n;

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];

type LimitField =
  | "verificationGasLimit"
  | "callGasLimit"
  | "paymasterVerificationGasLimit"
  | "paymasterPostOpGasLimit";
type Frame = {
  to?: string;
  input: string;
  gasUsed: Hex;
  error?: string;
  calls?: Frame[];
  logs?: { topics: Hex[]; data: Hex }[];
};

describe("estimates have a ceiling: each within a stated factor of what the chain needs", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  let bundler: Bundler;
  let workloads: Address;
  let relayer: Address;

  beforeAll(async () => {
    fx = await engineFixture();
    ({ bundler } = await fx.makeBundler({ relayerKeys: fx.devnet.relayerKeys.slice(0, 1) }));
    relayer = privateKeyToAccount(fx.devnet.relayerKeys[0]!).address;
    workloads = await deployGasWorkloads(fx.devnet);
  });
  afterAll(() => fx?.devnet.stop());

  /** An operation under test: estimated by the engine, signed, and how to sign it again at other limits. */
  interface Case {
    op: UserOperation;
    version: EntryPointVersion;
    sign: (op: UserOperation) => Promise<UserOperation>;
  }

  /** `call` from `account` (deployed or not), with the engine's estimate unchanged. */
  async function estimatedCase(
    account: SmartAccount,
    call: { to: Address; value?: bigint; data?: Hex },
    sponsor?: { paymaster: Address; data: Hex },
  ): Promise<Case> {
    const version = account.entryPoint.version as EntryPointVersion;
    const deployed = (await fx.client.getCode({ address: account.address })) !== undefined;
    const factoryArgs = deployed ? {} : await account.getFactoryArgs();
    const draft = {
      sender: account.address,
      nonce: await account.getNonce({ key: 0n }),
      callData: await account.encodeCalls([call]),
      ...unestimatedGas,
      signature: await account.getStubSignature(),
      ...(version === "0.6"
        ? {
            initCode: factoryArgs.factory
              ? `${factoryArgs.factory}${factoryArgs.factoryData!.slice(2)}`
              : "0x",
            paymasterAndData: "0x",
          }
        : {
            ...factoryArgs,
            ...(sponsor ? { paymaster: sponsor.paymaster, paymasterData: sponsor.data } : {}),
          }),
    } as UserOperation;
    const estimate = await bundler.estimateUserOperationGas(draft, account.entryPoint.address);
    const sign = signerOf(account);
    return { op: await sign({ ...draft, ...estimate } as UserOperation), version, sign };
  }

  /** Signs an operation of `account` (again, at other limits). */
  const signerOf = (account: SmartAccount) => async (op: UserOperation) =>
    ({
      ...op,
      signature: await account.signUserOperation({
        ...(op as object),
        chainId: fx.devnet.chainId,
      } as never),
    }) as UserOperation;

  /** A funded EOA delegating to the Simple7702 account with an authorization in its operation. */
  async function eip7702Case(call: { to: Address; value?: bigint; data?: Hex }): Promise<Case> {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = createWalletClient({
      chain: fx.devnet.chain,
      transport: http(fx.devnet.rpcUrl),
      account: privateKeyToAccount(fx.devnet.accountKeys.at(-3)!),
    });
    await fx.client.waitForTransactionReceipt({
      hash: await wallet.sendTransaction({ to: owner.address, value: parseEther("1") }),
    });
    const account = await toSimple7702SmartAccount({ client: fx.client, owner });
    const authorization = await owner.signAuthorization({
      contractAddress: SIMPLE_7702_ACCOUNT,
      chainId: fx.devnet.chainId,
      nonce: 0,
    });
    const draft = {
      sender: owner.address,
      nonce: await account.getNonce(),
      callData: await account.encodeCalls([call]),
      ...unestimatedGas,
      signature: await account.getStubSignature(),
      authorization: { ...authorization, yParity: authorization.yParity ?? 0 },
    } as UserOperationV07;
    const estimate = await bundler.estimateUserOperationGas(draft, account.entryPoint.address);
    const sign = signerOf(account);
    return { op: await sign({ ...draft, ...estimate }), version: "0.8", sign };
  }

  /** `handleOps([op])` as the relayer would send it, on the latest state, traced: did it revert, and did the operation succeed? */
  async function outcome(
    { version }: Case,
    op: UserOperation,
  ): Promise<"reverted" | "failed" | "succeeded"> {
    const entryPoint = defineEntryPoint(version);
    const data = encodeFunctionData({
      abi: entryPoint.abi,
      functionName: "handleOps",
      args: [[toEntryPointStruct(op)], relayer],
    });
    const authorization = !isUserOperationV06(op) && op.authorization;
    const call = {
      from: relayer,
      to: entryPoint.address,
      data,
      gas: numberToHex(15_000_000),
      ...(authorization
        ? {
            authorizationList: [
              {
                ...authorization,
                chainId: numberToHex(authorization.chainId),
                nonce: numberToHex(authorization.nonce),
                yParity: numberToHex(authorization.yParity ?? 0),
              },
            ],
          }
        : {}),
    };
    const trace = (await fx.client.request({
      method: "debug_traceCall",
      params: [call, "latest", { tracer: "callTracer", tracerConfig: { withLog: true } }],
    } as never)) as Frame;
    if (trace.error) return "reverted";
    const event = logsOf(trace).find((log) => log.topics[0] === userOperationEventTopic);
    return decodeUserOperationEvent(event as never).success ? "succeeded" : "failed";
  }

  /** The least value of `field` at which the operation is bundled and succeeds, by bisection below its estimate (which must succeed). */
  async function leastLimit(c: Case, field: LimitField) {
    const at = async (gas: bigint) =>
      outcome(c, await c.sign({ ...c.op, [field]: gas } as UserOperation));
    let high = (c.op as unknown as Record<string, bigint>)[field]!;
    expect(await at(high), `${field} at the estimate`).toBe("succeeded");
    let low = 0n;
    while (high - low > 1n) {
      const middle = (low + high) / 2n;
      if ((await at(middle)) === "succeeded") high = middle;
      else low = middle;
    }
    return high;
  }

  /** Send the operation alone in a bundle; the mined transaction, its trace and the operation's event. */
  async function bundleAlone({ op, version }: Case) {
    const userOpHash = await bundler.sendUserOperation(op, defineEntryPoint(version).address);
    const [transactionHash] = await bundler.sendBundleNow();
    const receipt = await fx.client.getTransactionReceipt({ hash: transactionHash! });
    const events = receipt.logs.filter((l) => l.topics[0] === userOperationEventTopic);
    expect(
      events.map((l) => l.topics[1]),
      "the operation alone in its bundle",
    ).toEqual([userOpHash]);
    const event = decodeUserOperationEvent(events[0] as never);
    expect(event.success).toBe(true);
    const transaction = await fx.client.getTransaction({ hash: transactionHash! });
    const trace = (await fx.client.request({
      method: "debug_traceTransaction",
      params: [transactionHash, { tracer: "callTracer" }],
    } as never)) as Frame;
    return { receipt, transaction, trace, event };
  }

  /**
   * What the bundle transaction spent on the operation that the EntryPoint did not meter, which
   * preVerificationGas must pay for: the transaction's gasUsed less the operation's metered
   * verification and execution gas. The event's actualGasUsed is that metered gas plus
   * preVerificationGas plus the EntryPoint's penalty for unused execution gas (none on v0.6; on
   * v0.8 none when callGasLimit is within 40,000 of the gas the call used; on v0.7 10 % of
   * callGasLimit less execution gas, solved for from `verificationGasUsed`, exact to ~10 gas).
   */
  function unmeteredCost(
    c: Case,
    mined: Awaited<ReturnType<typeof bundleAlone>>,
    verificationGasUsed: bigint,
  ): bigint {
    const { op } = c;
    const metered = mined.event.actualGasUsed - op.preVerificationGas;
    let penalty = 0n;
    if (c.version === "0.8" || c.version === "0.9") {
      const call = findFrame(
        mined.trace,
        (f) =>
          f.to?.toLowerCase() === op.sender.toLowerCase() && f.input === op.callData.toLowerCase(),
      );
      expect(op.callGasLimit, "v0.8 charges no penalty").toBeLessThanOrEqual(
        BigInt(call!.gasUsed) + 40_000n,
      );
    }
    if (c.version === "0.7") {
      const executionAndPenalty = metered - verificationGasUsed;
      for (let p = 0n; p <= op.callGasLimit / 10n; p++) {
        const execution = executionAndPenalty - p;
        if ((op.callGasLimit > execution ? (op.callGasLimit - execution) / 10n : 0n) === p) {
          penalty = p;
          break;
        }
      }
    }
    return mined.receipt.gasUsed - (metered - penalty);
  }

  /** The estimate of `field` is at least the least the chain takes, and at most `ceilingPercent` of it. */
  async function expectLimitWithin(c: Case, field: LimitField, ceilingPercent: bigint) {
    const estimate = (c.op as unknown as Record<string, bigint>)[field]!;
    const least = await leastLimit(c, field);
    expect(
      estimate,
      `${field}: the estimate against the least the chain takes, ${least}`,
    ).toBeGreaterThanOrEqual(least);
    expect(
      estimate,
      `${field}: the estimate against ${ceilingPercent}% of the least the chain takes, ${least}`,
    ).toBeLessThanOrEqual((least * ceilingPercent) / 100n);
  }

  /**
   * preVerificationGas pays for at least the bundle's unmetered cost, and at most `pvgMarkup`
   * and `pvgCalibrationGas` above it plus `allowance` (what the calculation charges knowingly).
   */
  async function expectPreVerificationGasWithin(c: Case, allowance: bigint) {
    const verificationGasUsed =
      c.version === "0.7" ? await leastLimit(c, "verificationGasLimit") : 0n;
    const mined = await bundleAlone(c);
    const cost = unmeteredCost(c, mined, verificationGasUsed);
    const pvg = c.op.preVerificationGas;
    expect(
      pvg,
      `preVerificationGas against the bundle's unmetered cost, ${cost}`,
    ).toBeGreaterThanOrEqual(cost);
    const ceiling =
      ((cost + allowance) * (100n + BigInt(bundler.settings.gas.preVerificationGasMarkupPercent))) / 100n + pvgCalibrationGas;
    expect(
      pvg,
      `preVerificationGas against ${ceiling}: the bundle's unmetered cost ${cost}, ${allowance} allowed, with the markup`,
    ).toBeLessThanOrEqual(ceiling);
    return mined;
  }

  const transfer = () => ({ to: privateKeyToAccount(generatePrivateKey()).address, value: 1n });

  it.each(versions)(
    "v%s, a transfer that deploys its account: verification gas 1–1.15×, call gas 1–1.06× the least the chain takes; preVerificationGas from the bundle's cost to pvgMarkup and 1,000 gas above it",
    async (version) => {
      const c = await estimatedCase(await fx.makeAccount(version), transfer());
      await expectLimitWithin(c, "verificationGasLimit", verificationCeilingPercent);
      await expectLimitWithin(c, "callGasLimit", executionCeilingPercent);
      await expectPreVerificationGasWithin(c, 0n);
    },
  );

  it.each(versions)(
    "v%s, 6 KiB of calldata from a deployed account, priced by the EIP-7623 floor: limits as above; preVerificationGas at most its callGasLimit more",
    async (version) => {
      const account = await fx.makeAccount(version);
      await bundleAlone(await estimatedCase(account, { to: account.address, value: 0n }));
      const data = encodeFunctionData({
        abi: gasWorkloadsAbi,
        functionName: "consume",
        args: [toHex(randomBytes(6144))],
      });
      const c = await estimatedCase(account, { to: workloads, data });
      await expectLimitWithin(c, "verificationGasLimit", verificationCeilingPercent);
      await expectLimitWithin(c, "callGasLimit", executionCeilingPercent);
      // Under the floor the calculation counts on a tenth of callGasLimit being executed: the rest of the execution is paid again.
      const mined = await expectPreVerificationGasWithin(c, c.op.callGasLimit);
      expect(mined.receipt.gasUsed, "the floor set the bundle's gas").toBe(
        21_000n + 10n * tokens(mined.transaction.input),
      );
    },
  );

  it("v0.8, an EIP-7702 authorization: limits as above; preVerificationGas pays the authorization, at most the chain's 12,500-gas refund more", async () => {
    const c = await eip7702Case(transfer());
    await expectLimitWithin(c, "verificationGasLimit", verificationCeilingPercent);
    await expectLimitWithin(c, "callGasLimit", executionCeilingPercent);
    const mined = await expectPreVerificationGasWithin(c, authorizationRefund);
    expect(mined.transaction.authorizationList).toHaveLength(1);
  });

  it.each<EntryPointVersion>(["0.7", "0.8", "0.9"])(
    "v%s, a paymaster whose postOp works: paymaster verification gas 1–1.15×, postOp gas 1–1.06× the least the chain takes",
    async (version) => {
      const paymaster = fx.devnet.deployments[version].paymasters.postOpWork!;
      const account = await fx.makeAccount(version, 0n);
      const c = await estimatedCase(
        account,
        { to: account.address, value: 0n },
        { paymaster, data: numberToHex(300, { size: 4 }) },
      );
      await expectLimitWithin(c, "paymasterVerificationGasLimit", verificationCeilingPercent);
      await expectLimitWithin(c, "paymasterPostOpGasLimit", executionCeilingPercent);
    },
  );
});

/** Every log of a call trace. */
function logsOf(frame: Frame): { topics: Hex[]; data: Hex }[] {
  return [...(frame.logs ?? []), ...(frame.calls ?? []).flatMap(logsOf)];
}

/** The first frame of a call trace that `predicate` accepts, depth first. */
function findFrame(frame: Frame, predicate: (f: Frame) => boolean): Frame | undefined {
  if (predicate(frame)) return frame;
  for (const call of frame.calls ?? []) {
    const found = findFrame(call, predicate);
    if (found) return found;
  }
  return undefined;
}

/** EIP-7623 calldata tokens: one per zero byte, four per other byte. */
function tokens(data: Hex): bigint {
  return hexToBytes(data).reduce((sum, byte) => sum + (byte === 0 ? 1n : 4n), 0n);
}
