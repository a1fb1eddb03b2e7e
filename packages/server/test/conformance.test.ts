import { deployGasWorkloads, type EntryPointVersion, gasWorkloadsAbi } from "@bundlekit/devnet";
import { dummySignature } from "@bundlekit/core";
import { encodeFunctionData, type Hex, pad, parseAbi, parseEther, toEventSelector } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getUserOperationHash } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * Wire conformance of the stand-alone service (spec/bundler-api.md, ERC-7769), table-driven per
 * operation and per EntryPoint version, over HTTP exactly as a client sends it.
 */

const hex = /^0x(0|[1-9a-f][0-9a-f]*)$/;
const bytes = /^0x([0-9a-f]{2})*$/;
const hash32 = /^0x[0-9a-f]{64}$/;
const address = /^0x[0-9a-fA-F]{40}$/;
const versions: EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];
const unknownHash = pad("0xdead", { size: 32 });

let fx: ServiceFixture;
beforeAll(async () => {
  fx = await serviceFixture();
});
afterAll(() => fx?.close());

const executeAbi = parseAbi(["function execute(address dest, uint256 value, bytes func)"]);

/** A wire operation with its numbers as bigints, as viem takes it. */
function userOpFromWire(op: Record<string, unknown>) {
  return Object.fromEntries(
    Object.entries(op).map(([k, v]) => [k, /^(nonce|.*GasLimit|preVerificationGas|maxFeePerGas|maxPriorityFeePerGas)$/.test(k) ? BigInt(v as string) : v]),
  );
}

/** viem's userOpHash of a wire operation: the oracle the service's hashes are checked against. */
function userOpHashOf(op: Record<string, unknown>, version: EntryPointVersion, entryPoint: Hex) {
  return getUserOperationHash({ userOperation: userOpFromWire(op) as never, entryPointAddress: entryPoint, entryPointVersion: version, chainId: fx.devnet.chainId });
}

/** A copy of `op` with `field` set to `value` (`undefined` deletes it). */
function withField(op: Record<string, unknown>, field: string, value: unknown) {
  const copy = { ...op };
  if (value === undefined) delete copy[field];
  else copy[field] = value;
  return copy;
}

describe.each(versions)("EntryPoint v%s", (version) => {
  let op: Record<string, unknown>;
  let entryPoint: Hex;
  const numberFields = ["nonce", "callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas", "maxPriorityFeePerGas"];
  const requiredFields = version === "0.6"
    ? ["sender", "nonce", "initCode", "callData", "callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas", "maxPriorityFeePerGas", "paymasterAndData", "signature"]
    : ["sender", "nonce", "callData", "callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas", "maxPriorityFeePerGas", "signature"];
  // v0.6 lets initCode and paymasterAndData default to 0x when absent; the rest must be there.
  const mustBePresent = requiredFields.filter((f) => f !== "initCode" && f !== "paymasterAndData");

  beforeAll(async () => {
    entryPoint = fx.entryPoint(version);
    op = await fx.signedOperation(await fx.makeAccount(version));
  });

  describe("eth_sendUserOperation", () => {
    it.each(mustBePresent)("a missing %s is -32602 naming it", async (field) => {
      const { error } = await fx.call("eth_sendUserOperation", [withField(op, field, undefined), entryPoint]);
      expect(error).toMatchObject({ code: -32602, data: { field: `params[0].${field}` } });
      expect(error.message).toContain(`params[0].${field}`);
      expect(error.message).toContain("required");
    });

    it.each(mustBePresent)("an explicit null %s counts as absent", async (field) => {
      const { error } = await fx.call("eth_sendUserOperation", [withField(op, field, null), entryPoint]);
      expect(error).toMatchObject({ code: -32602, data: { field: `params[0].${field}` } });
    });

    const malformed: [string, string, unknown, RegExp][] = [
      ["sender", "19 bytes", `0x${"ab".repeat(19)}`, /20-byte address, got 19 bytes/],
      ["sender", "21 bytes", `0x${"ab".repeat(21)}`, /20-byte address, got 21 bytes/],
      ["sender", "a number", 12345, /expected 0x-prefixed hex bytes, got a number/],
      ["sender", "no 0x prefix", "ab".repeat(20), /0x-prefixed/],
      ["callData", "odd-length hex", "0x123", /odd number of hex digits/],
      ["callData", "non-hex characters", "0xzz", /non-hex/],
      ["callData", "an array", ["0x"], /got an array/],
      ["signature", "a boolean", true, /got a boolean/],
      ["nonce", "a JSON number", 1, /hex quantity, got a number/],
      ["nonce", "a decimal string", "10", /0x-prefixed hex quantity/],
      ["nonce", "empty hex", "0x", /not a hex quantity/],
      ["nonce", "non-hex digits", "0xgg", /not a hex quantity/],
      ["nonce", "a negative number", "-0x1", /0x-prefixed hex quantity/],
      ["nonce", "2^256", `0x1${"0".repeat(64)}`, /does not fit in 256 bits/],
      ["maxFeePerGas", "a huge value", `0x${"f".repeat(200)}`, /does not fit/],
      ["callGasLimit", "a BigNumber object without hex", { type: "BigNumber" }, /BigNumber/],
      ["callGasLimit", "an object of another type", { type: "Decimal", hex: "0x1" }, /BigNumber/],
    ];
    it.each(malformed)("%s as %s is -32602 saying what is wrong", async (field, _what, value, problem) => {
      const { error } = await fx.call("eth_sendUserOperation", [withField(op, field, value), entryPoint]);
      expect(error.code).toBe(-32602);
      expect(error.data.field).toBe(`params[0].${field}`);
      expect(error.message).toMatch(problem);
    });

    if (version === "0.6") {
      it.each(["factory", "paymaster"])("the v0.7+ field %s is refused", async (field) => {
        const { error } = await fx.call("eth_sendUserOperation", [withField(op, field, `0x${"11".repeat(20)}`), entryPoint]);
        expect(error).toMatchObject({ code: -32602, data: { field: `params[0].${field}` } });
        expect(error.message).toMatch(/not a v0.6 field/);
      });
    } else {
      it.each(["initCode", "paymasterAndData"])("the v0.6 field %s is refused", async (field) => {
        const { error } = await fx.call("eth_sendUserOperation", [withField(op, field, "0x"), entryPoint]);
        expect(error).toMatchObject({ code: -32602, data: { field: `params[0].${field}` } });
        expect(error.message).toMatch(/v0.6 field/);
      });
      it("factoryData without factory is refused", async () => {
        const { error } = await fx.call("eth_sendUserOperation", [{ ...withField(op, "factory", undefined), factoryData: "0x1234" }, entryPoint]);
        expect(error).toMatchObject({ code: -32602, data: { field: "params[0].factoryData" } });
      });
    }

    it("an EntryPoint the service does not serve is -32602 listing the served ones", async () => {
      const { error } = await fx.call("eth_sendUserOperation", [op, `0x${"12".repeat(20)}`]);
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(new RegExp(`^EntryPoint 0x${"12".repeat(20)} not supported; supported: `));
      expect(error.data.supported).toContain(entryPoint);
    });

    it.each([
      ["no params", undefined],
      ["one param", "op"],
      ["three params", "op,ep,extra"],
    ])("%s is -32602", async (_what, shape) => {
      const params = shape === undefined ? undefined : shape === "op" ? [op] : [op, entryPoint, "0x"];
      const { error } = await fx.call("eth_sendUserOperation", params);
      expect(error.code).toBe(-32602);
    });

    it("a signature by another key is -32507", async () => {
      const stranger = privateKeyToAccount(generatePrivateKey());
      const hash = userOpHashOf(op, version, entryPoint);
      // SimpleAccount v0.8 signs the raw EIP-712 hash; earlier versions the personal-message digest.
      const signature = version === "0.6" || version === "0.7" ? await stranger.signMessage({ message: { raw: hash } }) : await stranger.sign({ hash });
      const { error } = await fx.call("eth_sendUserOperation", [{ ...op, signature }, entryPoint]);
      expect(error.code).toBe(-32507);
      expect(error.message).toMatch(/AA24/);
    });

    it("accepts the op, BigNumber objects included, and answers viem's userOpHash", async () => {
      // An operation of its own: the shared one stays out of the pool, where it would be a duplicate for the other tests.
      const accepted = await fx.signedOperation(await fx.makeAccount(version));
      const asBigNumbers = { ...accepted };
      for (const field of ["nonce", "callGasLimit", "verificationGasLimit", "preVerificationGas"]) {
        asBigNumbers[field] = { type: "BigNumber", hex: accepted[field] };
      }
      const { result } = await fx.call("eth_sendUserOperation", [asBigNumbers, entryPoint]);
      expect(result).toBe(userOpHashOf(accepted, version, entryPoint));
      // Sending it again is a duplicate.
      const again = await fx.call("eth_sendUserOperation", [accepted, entryPoint]);
      expect(again.error.code).toBe(-32602);
      expect(again.error.message).toMatch(/already known/);
    });
  });

  describe("eth_estimateUserOperationGas", () => {
    const zeroed = () => {
      const draft: Record<string, unknown> = { ...op, signature: dummySignature };
      for (const field of numberFields.filter((f) => f !== "nonce")) draft[field] = "0x0";
      return draft;
    };

    it("answers the six fields of the spec as hex quantities, from zeroed gas and a stub signature", async () => {
      const { result } = await fx.call("eth_estimateUserOperationGas", [zeroed(), entryPoint]);
      for (const field of ["preVerificationGas", "verificationGas", "verificationGasLimit", "callGasLimit", "maxFeePerGas", "maxPriorityFeePerGas"]) {
        expect(result[field], field).toMatch(hex);
      }
      expect(result.verificationGas).toBe(result.verificationGasLimit);
      expect(BigInt(result.verificationGasLimit)).toBeGreaterThan(100_000n); // deploys the account
      expect(BigInt(result.callGasLimit)).toBeGreaterThan(0n);
    });

    it("takes absent or null gas fields and signature, and a trailing null parameter", async () => {
      const draft = zeroed();
      for (const field of numberFields.filter((f) => f !== "nonce")) draft[field] = null;
      draft.signature = null;
      const { result, error } = await fx.call("eth_estimateUserOperationGas", [draft, entryPoint, null]);
      expect(error).toBeUndefined();
      expect(result.callGasLimit).toMatch(hex);
    });

    it("simulates on top of a state override", async () => {
      // A call to an address without code succeeds; with code that reverts overridden there, it reverts.
      const target = `0x${"42".repeat(20)}` as Hex;
      const draft = { ...zeroed(), callData: encodeFunctionData({ abi: executeAbi, args: [target, 0n, "0x"] }) };
      const plain = await fx.call("eth_estimateUserOperationGas", [draft, entryPoint]);
      expect(plain.result.callGasLimit).toMatch(hex);
      const reverting = await fx.call("eth_estimateUserOperationGas", [draft, entryPoint, { [target]: { code: "0x60006000fd" } }]);
      expect(reverting.error.code).toBe(-32521);
    });

    it.each([
      ["not an object", "0x", /expected an object/],
      ["a bad address key", { "0x1234": { balance: "0x1" } }, /20-byte address/],
      ["an unknown field", { [`0x${"11".repeat(20)}`]: { storage: {} } }, /not a state-override field/],
      ["a bad slot", { [`0x${"11".repeat(20)}`]: { stateDiff: { "0x01": "0x02" } } }, /32-byte hash/],
    ])("a state override that is %s is -32602", async (_what, override, problem) => {
      const { error } = await fx.call("eth_estimateUserOperationGas", [zeroed(), entryPoint, override]);
      expect(error.code).toBe(-32602);
      expect(error.data.field).toMatch(/^params\[2\]/);
      expect(error.message).toMatch(problem);
    });

    it("a missing sender is -32602", async () => {
      const { error } = await fx.call("eth_estimateUserOperationGas", [withField(zeroed(), "sender", undefined), entryPoint]);
      expect(error).toMatchObject({ code: -32602, data: { field: "params[0].sender" } });
    });
  });
});

describe("lookups through an operation's life", () => {
  it.each(versions)("v%s: null when unknown, a record with null transaction fields while pending, then the full record and receipt", async (version) => {
    for (const method of ["eth_getUserOperationByHash", "eth_getUserOperationReceipt"]) {
      expect(await fx.call(method, [unknownHash])).toEqual({ jsonrpc: "2.0", id: 1, result: null });
    }
    const account = await fx.makeAccount(version);
    const entryPoint = fx.entryPoint(version);
    // Deposit to the EntryPoint for the account: its execution emits a `Deposited` log.
    const depositTo = encodeFunctionData({ abi: parseAbi(["function depositTo(address account) payable"]), args: [account.address] });
    const op = await fx.signedOperation(account, { to: entryPoint, value: parseEther("0.01"), data: depositTo });
    const { result: userOpHash } = await fx.call("eth_sendUserOperation", [op, entryPoint]);
    expect(userOpHash).toMatch(hash32);

    const pending = (await fx.call("eth_getUserOperationByHash", [userOpHash])).result;
    expect(pending).toEqual({ userOperation: op, entryPoint, transactionHash: null, blockHash: null, blockNumber: null, preconfirmation: null });
    expect((await fx.call("eth_getUserOperationReceipt", [userOpHash])).result).toBeNull();

    await fx.service.bundler.sendBundleNow();

    const included = (await fx.call("eth_getUserOperationByHash", [userOpHash])).result;
    expect(included.userOperation).toEqual(op);
    expect(included).toMatchObject({ entryPoint, transactionHash: expect.stringMatching(hash32), blockHash: expect.stringMatching(hash32), blockNumber: expect.stringMatching(hex) });

    const receipt = (await fx.call("eth_getUserOperationReceipt", [userOpHash])).result;
    expect(receipt).toMatchObject({
      userOpHash,
      sender: op.sender,
      nonce: op.nonce,
      actualGasCost: expect.stringMatching(hex),
      actualGasUsed: expect.stringMatching(hex),
      success: true,
    });
    // This operation's logs only: the deposit its execution made, not the bundle's other events.
    expect(receipt.logs.map((log: { topics: Hex[] }) => log.topics[0])).toEqual([toEventSelector("Deposited(address,uint256)")]);
    for (const log of receipt.logs) {
      expect(log).toMatchObject({
        transactionIndex: expect.stringMatching(hex),
        blockNumber: included.blockNumber,
        transactionHash: included.transactionHash,
        address: expect.stringMatching(address),
        data: expect.stringMatching(bytes),
        logIndex: expect.stringMatching(hex),
        blockHash: included.blockHash,
      });
    }
    const tx = receipt.receipt;
    expect(tx).toMatchObject({
      to: expect.stringMatching(address),
      from: expect.stringMatching(address),
      contractAddress: null,
      transactionIndex: expect.stringMatching(hex),
      gasUsed: expect.stringMatching(hex),
      logsBloom: expect.stringMatching(/^0x[0-9a-f]{512}$/),
      blockHash: included.blockHash,
      transactionHash: included.transactionHash,
      blockNumber: included.blockNumber,
      confirmations: expect.stringMatching(hex),
      cumulativeGasUsed: expect.stringMatching(hex),
      effectiveGasPrice: expect.stringMatching(hex),
      status: "0x1",
      type: expect.stringMatching(hex),
      byzantium: true,
    });
    expect(tx.to.toLowerCase()).toBe(entryPoint.toLowerCase());
    expect(tx.logs.length).toBeGreaterThanOrEqual(receipt.logs.length);
    expect(BigInt(tx.confirmations)).toBeGreaterThanOrEqual(1n);
  });

  it.each(versions)("v%s: an operation whose execution reverts is included with success false and the reason", async (version) => {
    const account = await fx.makeAccount(version);
    const entryPoint = fx.entryPoint(version);
    const workloads = await deployGasWorkloads(fx.devnet);
    // Estimated for a harmless call, then sent calling a callee that reverts: only the execution fails.
    const op = await fx.signedOperation(account);
    const fail = encodeFunctionData({ abi: gasWorkloadsAbi, functionName: "fail", args: ["out of luck"] });
    const reverting: Record<string, unknown> = {
      ...op,
      callData: encodeFunctionData({ abi: executeAbi, args: [workloads, 0n, fail] }),
      callGasLimit: `0x${(BigInt(op.callGasLimit as string) + 50_000n).toString(16)}`,
    };
    reverting.signature = await account.signUserOperation(userOpFromWire(reverting) as never);
    const { result: userOpHash } = await fx.call("eth_sendUserOperation", [reverting, entryPoint]);
    await fx.service.bundler.sendBundleNow();
    const receipt = (await fx.call("eth_getUserOperationReceipt", [userOpHash])).result;
    expect(receipt).toMatchObject({ userOpHash, success: false, reason: "out of luck", receipt: { status: "0x1" } });
    expect(BigInt(receipt.actualGasCost)).toBeGreaterThan(0n); // it still paid
  });

  it.each(["", "0x", "0x1234", 7, null])("a malformed hash %j is -32602 Missing/invalid userOpHash", async (value) => {
    for (const method of ["eth_getUserOperationByHash", "eth_getUserOperationReceipt"]) {
      const { error } = await fx.call(method, [value]);
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(/^Missing\/invalid userOpHash/);
    }
  });
});

describe("fees", () => {
  it("bundler_getGasPrice answers both fees as hex quantities", async () => {
    const { result } = await fx.call("bundler_getGasPrice");
    expect(Object.keys(result).sort()).toEqual(["maxFeePerGas", "maxPriorityFeePerGas"]);
    expect(result.maxFeePerGas).toMatch(hex);
    expect(BigInt(result.maxFeePerGas)).toBeGreaterThanOrEqual(BigInt(result.maxPriorityFeePerGas));
  });

  it("bundler_feeHistory takes [entryPoint, decimal count, block tag] and answers aligned arrays", async () => {
    const version = "0.7";
    const account = await fx.makeAccount(version);
    const op = await fx.signedOperation(account);
    await fx.call("eth_sendUserOperation", [op, fx.entryPoint(version)]);
    await fx.service.bundler.sendBundleNow();
    const { result } = await fx.call("bundler_feeHistory", [fx.entryPoint(version), "10", "latest"]);
    expect(Object.keys(result).sort()).toEqual(["actualGasPrice", "maxFeePerGas", "maxPriorityFeePerGas"]);
    expect(result.actualGasPrice.length).toBeGreaterThanOrEqual(1);
    expect(result.maxFeePerGas).toHaveLength(result.actualGasPrice.length);
    expect(result.maxPriorityFeePerGas).toHaveLength(result.actualGasPrice.length);
    expect(result.maxFeePerGas).toContain(op.maxFeePerGas);
    for (const value of [...result.actualGasPrice, ...result.maxFeePerGas]) expect(value).toMatch(hex);
    // What an operation paid per gas never exceeds what it offered.
    result.actualGasPrice.forEach((paid: string, i: number) => {
      expect(BigInt(paid)).toBeLessThanOrEqual(BigInt(result.maxFeePerGas[i]));
    });
    // A block with no operations has an empty history.
    const { result: empty } = await fx.call("bundler_feeHistory", [fx.entryPoint(version), "1", "0x0"]);
    expect(empty).toEqual({ actualGasPrice: [], maxFeePerGas: [], maxPriorityFeePerGas: [] });
  });

  it.each([
    [["0x1234", "10", "latest"], /params\[0\]/],
    [[`0x${"12".repeat(20)}`, "10", "latest"], /^EntryPoint 0x(12){20} not supported/],
    [["ENTRY", "ten", "latest"], /params\[1\].*non-negative integer/],
    [["ENTRY", "0", "latest"], /must be from 1 to/],
    [["ENTRY", "100000000", "latest"], /must be from 1 to/],
    [["ENTRY", "10", "yesterday"], /params\[2\].*block tag/],
    [["ENTRY", "10", "0xffffffff"], /invalid newestBlock: block 4294967295 is past the chain's head \d+$/],
    [["ENTRY"], /expected 2 to 3 parameters/],
  ])("bundler_feeHistory %j is -32602", async (params, problem) => {
    const { error } = await fx.call("bundler_feeHistory", params.map((p) => (p === "ENTRY" ? fx.entryPoint("0.7") : p)));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(problem);
  });
});

describe("chain facts", () => {
  it("eth_chainId, eth_supportedEntryPoints and web3_clientVersion", async () => {
    expect((await fx.call("eth_chainId")).result).toBe(`0x${fx.devnet.chainId.toString(16)}`);
    expect((await fx.call("eth_supportedEntryPoints")).result).toEqual(versions.map((v) => fx.entryPoint(v)));
    expect((await fx.call("web3_clientVersion")).result).toMatch(/^bundlekit\//);
    expect((await fx.call("eth_chainId", ["extra"])).error.code).toBe(-32602);
  });
});
