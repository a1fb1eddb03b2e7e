import { deployGasWorkloads, type EntryPointVersion, gasWorkloadsAbi, verifyingPaymasterData } from "@bundlekit/devnet";
import { randomBytes } from "node:crypto";
import { type Address, concat, encodeAbiParameters, encodeFunctionData, type Hash, type Hex, keccak256, numberToHex, parseAbi, parseEther, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { SmartAccount } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { engineFixture, rejection, unestimatedGas } from "./fixtures.ts";

const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];
const depositAbi = parseAbi(["function balanceOf(address) view returns (uint256)"]);
const digestAbi = parseAbi(["function digest() view returns (bytes32)"]);

/** Paymaster fields of an operation: v0.6 `paymasterAndData`, v0.7+ the unpacked ones. */
type Sponsor = { paymaster: Address; data: Hex };

describe("gas estimation: each limit is what the phase needs, and the operation lands with it", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  let bundler: Bundler;
  let workloads: Address;

  beforeAll(async () => {
    fx = await engineFixture();
    // The 16 KiB calldata workload is above ERC-7562's 8192-byte operation limit (LIM-010): raised here.
    ({ bundler } = await fx.makeBundler({ settings: { validation: { maxUserOperationBytes: 32_768 }, bundling: { maxOperations: 10 } } }));
    workloads = await deployGasWorkloads(fx.devnet);
  });
  afterAll(async () => {
    await fx.devnet.stop();
  });

  /** The operation of `account` making `call`, optionally sponsored, with the engine's estimate used unchanged; signed. */
  async function estimated(account: SmartAccount, call: { to: Address; value?: bigint; data?: Hex }, sponsor?: Sponsor) {
    const version = account.entryPoint.version as EntryPointVersion;
    const factoryArgs = (await fx.client.getCode({ address: account.address })) ? {} : await account.getFactoryArgs();
    const draft = {
      sender: account.address,
      nonce: await account.getNonce({ key: 0n }),
      callData: await account.encodeCalls([call]),
      ...unestimatedGas,
      signature: await account.getStubSignature(),
      ...(version === "0.6"
        ? { initCode: factoryArgs.factory ? concat([factoryArgs.factory, factoryArgs.factoryData!]) : "0x", paymasterAndData: sponsor ? concat([sponsor.paymaster, sponsor.data]) : "0x" }
        : { ...factoryArgs, ...(sponsor ? { paymaster: sponsor.paymaster, paymasterData: sponsor.data } : {}) }),
    } as UserOperation;
    const estimate = await bundler.estimateUserOperationGas(draft, account.entryPoint.address);
    const op = { ...draft, ...estimate } as UserOperation;
    return { op, estimate };
  }

  async function sign(account: SmartAccount, op: UserOperation): Promise<UserOperation> {
    return { ...op, signature: await account.signUserOperation({ ...(op as object), chainId: fx.devnet.chainId } as never) } as UserOperation;
  }

  async function include(account: SmartAccount, op: UserOperation) {
    const hash = await bundler.sendUserOperation(await sign(account, op), account.entryPoint.address);
    await bundler.sendBundleNow();
    const receipt = await bundler.getUserOperationReceipt(hash);
    expect(receipt, "included").toBeDefined();
    return receipt!;
  }

  it.each(versions)("v%s: a call that needs 400,000 gas forwarded to its callee succeeds on chain", async (version) => {
    const account = await fx.makeAccount(version);
    const data = encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "requireGas", args: [400_000n] });
    const { op, estimate } = await estimated(account, { to: workloads, data });
    // The callee gets 63/64 of what the account has left: the limit must cover 400,000 × 64/63 and the account's own work.
    expect(estimate.callGasLimit).toBeGreaterThan(406_349n);
    expect(estimate.callGasLimit).toBeLessThan(460_000n);
    const receipt = await include(account, op);
    expect(receipt.success).toBe(true);
  });

  /** The benchmark's workloads (bench/gas.ts): calls whose gas needs differ in kind. */
  const workloadCalls = (): Record<string, { to: Address; value?: bigint; data?: Hex }> => {
    const call = (functionName: string, args: unknown[]) => ({ to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName, args }) });
    return {
      "a plain transfer": { to: privateKeyToAccount(fx.devnet.accountKeys[11]!).address, value: 1n },
      "4 KiB of calldata": call("consume", [toHex(randomBytes(4096))]),
      "16 KiB of calldata": call("consume", [toHex(randomBytes(16384))]),
      "a loop of 10 rounds": call("loop", [10n]),
      "a loop of 5,000 rounds": call("loop", [5000n]),
      "a call that needs 400,000 gas forwarded": call("requireGas", [400_000n]),
    };
  };

  it.each(versions)("v%s: each workload lands with the estimate used unchanged, deploying its account and then from it", async (version) => {
    const calls = Object.entries(workloadCalls());
    const accounts = await Promise.all(calls.map(() => fx.makeAccount(version)));
    for (const round of ["deploying", "deployed"]) {
      const hashes: Hash[] = [];
      for (const [i, [, call]] of calls.entries()) {
        const { op } = await estimated(accounts[i]!, call);
        hashes.push(await bundler.sendUserOperation(await sign(accounts[i]!, op), accounts[i]!.entryPoint.address));
      }
      await bundler.sendBundleNow();
      for (const [i, hash] of hashes.entries()) {
        expect((await bundler.getUserOperationReceipt(hash))?.success, `${calls[i]![0]}, ${round}`).toBe(true);
      }
    }
  });

  it.each(versions)("v%s: verification gas covers deploying the account and paying the prefund", async (version) => {
    const account = await fx.makeAccount(version);
    const { op } = await estimated(account, { to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "loop", args: [200n] }) });
    const receipt = await include(account, op);
    expect(receipt.success).toBe(true);
    expect(await fx.client.getCode({ address: account.address })).toBeDefined();
  });

  /**
   * A new v0.7 account's unestimated operation with 16 KiB of calldata, under EIP-7623's floor, at
   * fixed fees; the account holds nothing (the tests give it a balance or deposit by override).
   */
  async function floorBoundDraft() {
    const account = await fx.makeAccount("0.7", 0n);
    const call = { to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "consume", args: [toHex(randomBytes(16384))] }) };
    const draft = {
      sender: account.address,
      nonce: 0n,
      callData: await account.encodeCalls([call]),
      ...(await account.getFactoryArgs()),
      ...unestimatedGas,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      signature: await account.getStubSignature(),
    } as UserOperation;
    return { account, draft };
  }

  it("an account holding exactly the prefund of its estimate gets that estimate; one wei less is AA21 (-32500)", async () => {
    // Under EIP-7623's floor, preVerificationGas shrinks as verification gas grows, so the
    // estimate's prefund is below the most it could be.
    const { account, draft } = await floorBoundDraft();
    const holding = (balance: bigint) => ({ [account.address]: { balance: numberToHex(balance) } });
    const entryPoint = account.entryPoint.address;
    const rich = await bundler.estimateUserOperationGas(draft, entryPoint, holding(parseEther("1")));
    const prefund = (rich.callGasLimit + rich.verificationGasLimit + rich.preVerificationGas) * draft.maxFeePerGas;
    expect(await bundler.estimateUserOperationGas(draft, entryPoint, holding(prefund))).toEqual(rich);
    const short = await rejection(bundler.estimateUserOperationGas(draft, entryPoint, holding(prefund - 1n)));
    expect(short).toMatchObject({ code: RpcErrorCode.entryPointRejected, message: expect.stringMatching(/^AA21/) });
  });

  it("an account whose EntryPoint deposit pays its prefund gets the same estimate whatever its balance: no verification gas for a payment it will not make", async () => {
    // Under EIP-7623's floor, counting a prefund payment the account will not make would leave
    // preVerificationGas short.
    const { account, draft } = await floorBoundDraft();
    const entryPoint = account.entryPoint.address;
    // `deposits[account]` of the EntryPoint's StakeManager (slot 0's mapping), then its balance.
    const depositSlot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [account.address, 0n]));
    const holding = (balance: bigint, deposit: bigint) => ({
      [account.address]: { balance: numberToHex(balance) },
      [entryPoint]: { stateDiff: { [depositSlot]: numberToHex(deposit, { size: 32 }) } },
    });
    const paying = await bundler.estimateUserOperationGas(draft, entryPoint, holding(parseEther("1"), 0n));
    // A deposit above that prefund by 50,000 gas: it pays the prefund, and the account nothing.
    const deposit = (paying.callGasLimit + paying.verificationGasLimit + paying.preVerificationGas + 50_000n) * draft.maxFeePerGas;
    const poor = await bundler.estimateUserOperationGas(draft, entryPoint, holding(0n, deposit));
    expect(poor.preVerificationGas).toBeGreaterThan(paying.preVerificationGas);
    expect(poor.callGasLimit + poor.verificationGasLimit + poor.preVerificationGas).toBeLessThanOrEqual(deposit / draft.maxFeePerGas);
    expect(await bundler.estimateUserOperationGas(draft, entryPoint, holding(parseEther("1"), deposit))).toEqual(poor);
  });

  it.each(versions)("v%s: a call that spends more than the account holds answers -32521", async (version) => {
    const account = await fx.makeAccount(version, parseEther("0.5"));
    const error = await rejection(estimated(account, { to: workloads, value: parseEther("0.6") }));
    expect(error.code).toBe(RpcErrorCode.executionReverted);
  });

  it.each<[string, Hex, string | undefined]>([
    ["Error(string)", encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "fail", args: ["not today"] }), "not today"],
    ["Panic(uint256)", encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "divide", args: [1n, 0n] }), "Panic(0x12)"],
    ["a custom error", encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "refuse", args: [7n] }), undefined],
  ])("a call reverting with %s answers -32521 with its reason and revert data", async (_kind, data, reason) => {
    const account = await fx.makeAccount("0.7");
    const error = await rejection(estimated(account, { to: workloads, data }));
    expect(error.code).toBe(RpcErrorCode.executionReverted);
    expect(error.message).toBe(reason ? `execution reverted: ${reason}` : "execution reverted");
    const revertData = (error.data as { revertData: Hex }).revertData;
    if (reason === undefined) {
      // Refused(7): the custom error's raw data, selector and argument.
      expect(revertData.slice(10)).toBe(numberToHex(7n, { size: 32 }).slice(2));
    } else {
      expect((error.data as { reason: string }).reason).toBe(reason);
    }
  });

  it.each(versions)("v%s: a validation failure keeps its EntryPoint code", async (version) => {
    const account = await fx.makeAccount(version);
    const wrongNonce = { ...(await estimated(account, { to: account.address, value: 1n })).op, nonce: 5n, signature: await account.getStubSignature() };
    const error = await rejection(bundler.estimateUserOperationGas({ ...wrongNonce } as UserOperation, account.entryPoint.address));
    expect(error.code).toBe(RpcErrorCode.entryPointRejected);
    expect(error.message).toMatch(/^AA25/);
  });

  it.each(versions)("v%s: an operation sponsored by the verifying paymaster is estimated and included", async (version) => {
    // The v0.6 sample paymaster writes a per-sender nonce in its own storage: ERC-7562 (STO-022)
    // allows that only for a deployed account (or a staked factory), so v0.6 sponsors one deployed first.
    const account = await fx.makeAccount(version, version === "0.6" ? parseEther("1") : 0n);
    if (version === "0.6") await include(account, (await estimated(account, { to: account.address, value: 0n })).op);
    const { entryPoint, paymasters } = fx.devnet.deployments[version];
    const paymaster = paymasters.verifying;
    // A well-formed stub signature: the paymaster reports it invalid instead of reverting.
    const stub = concat([encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]), await account.getStubSignature()]);
    const { op, estimate } = await estimated(account, { to: workloads, data: encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "loop", args: [10n] }) }, { paymaster, data: stub });
    if (version !== "0.6") expect(estimate.paymasterVerificationGasLimit).toBeGreaterThan(0n);
    const signed = await verifyingPaymasterData({ client: fx.client, version, paymaster, userOperation: op as never });
    const sponsored = (version === "0.6" ? { ...op, paymasterAndData: signed } : { ...op, paymasterData: signed }) as UserOperation;
    const depositBefore = await fx.client.readContract({ address: entryPoint, abi: depositAbi, functionName: "balanceOf", args: [paymaster] });
    const receipt = await include(account, sponsored);
    expect(receipt.success).toBe(true);
    expect(receipt.paymaster).toBe(paymaster);
    const depositAfter = await fx.client.readContract({ address: entryPoint, abi: depositAbi, functionName: "balanceOf", args: [paymaster] });
    expect(depositBefore - depositAfter).toBe(receipt.actualGasCost);
  });

  it.each(versions)("v%s: an estimate the paymaster fails (AA3x) answers -32501 naming the paymaster in data, as sending does", async (version) => {
    const account = await fx.makeAccount(version);
    const { paymasters } = fx.devnet.deployments[version];
    // The verifying paymaster reverts on data too short to hold its validity window and signature (AA33).
    const error = await rejection(estimated(account, { to: account.address }, { paymaster: paymasters.verifying, data: "0x01" }));
    expect(error.code).toBe(RpcErrorCode.paymasterRejected);
    expect(error.data).toMatchObject({ reason: expect.stringMatching(/^AA33/), paymaster: paymasters.verifying });
  });

  it.each<EntryPointVersion>(["0.7", "0.8", "0.9"])("v%s: paymasterPostOpGasLimit grows with the postOp's work, which succeeds within it", async (version) => {
    const paymaster = fx.devnet.deployments[version].paymasters.postOpWork!;
    const limits: bigint[] = [];
    for (const rounds of [0, 300, 3000]) {
      const account = await fx.makeAccount(version, 0n);
      const { op, estimate } = await estimated(account, { to: account.address, value: 0n }, { paymaster, data: numberToHex(rounds, { size: 4 }) });
      limits.push(estimate.paymasterPostOpGasLimit!);
      const digest = await fx.client.readContract({ address: paymaster, abi: digestAbi, functionName: "digest" });
      const receipt = await include(account, op);
      // success is false when postOp reverts; the digest moves only when postOp's rounds ran.
      expect(receipt.success).toBe(true);
      if (rounds > 0) expect(await fx.client.readContract({ address: paymaster, abi: digestAbi, functionName: "digest" })).not.toBe(digest);
    }
    expect(limits[1]!).toBeGreaterThan(limits[0]! + 300n * 30n);
    expect(limits[2]!).toBeGreaterThan(limits[1]! + 2700n * 30n);
  });

  it.each<EntryPointVersion>(["0.7", "0.8", "0.9"])("v%s: a postOp given too little gas reverts: included, success false, the reason, and the paymaster pays", async (version) => {
    const { entryPoint, paymasters } = fx.devnet.deployments[version];
    const paymaster = paymasters.postOpWork!;
    const account = await fx.makeAccount(version, 0n);
    const { op } = await estimated(account, { to: account.address, value: 0n }, { paymaster, data: numberToHex(3000, { size: 4 }) });
    const starved = { ...op, paymasterPostOpGasLimit: 20_000n } as UserOperation;
    const depositBefore = await fx.client.readContract({ address: entryPoint, abi: depositAbi, functionName: "balanceOf", args: [paymaster] });
    const receipt = await include(account, starved);
    expect(receipt.success).toBe(false);
    expect(receipt.reason).toMatch(/^postOp reverted: /);
    const depositAfter = await fx.client.readContract({ address: entryPoint, abi: depositAbi, functionName: "balanceOf", args: [paymaster] });
    expect(depositBefore - depositAfter).toBe(receipt.actualGasCost);
  });

  it("the receipt of a successful operation has no reason", async () => {
    const account = await fx.makeAccount("0.7");
    const receipt = await include(account, (await estimated(account, { to: account.address, value: 1n })).op);
    expect(receipt.success).toBe(true);
    expect(receipt).not.toHaveProperty("reason");
  });
});
