import type { UserOperation, UserOperationV06, UserOperationV07 } from "@bundlekit/core";
import { createSimulatedClock } from "@bundlekit/core/simulation";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, createPublicClient, encodeFunctionData, type Hex, http, parseAbi, parseEther, parseGwei, toHex } from "viem";
import { type EntryPointVersion, entryPoint06Address, entryPoint07Address, entryPoint08Address } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { byApiKey } from "../src/sponsorship/api-keys.ts";
import { simpleAccountCallTargets } from "../src/sponsorship/call-targets.ts";
import { createConfiguredSponsorshipPolicy, devnetSponsorLimits, limitsPolicy } from "../src/sponsorship/configured-policy.ts";
import { allOf, refuse, type SponsorshipPolicy, type SponsorshipRequest, sponsor } from "../src/sponsorship/policy.ts";
import { quotaPerWindow } from "../src/sponsorship/quota.ts";
import { capGas, onlySenders, onlyTargets } from "../src/sponsorship/rules.ts";

const sender: Address = "0x1111111111111111111111111111111111111111";
const paymaster: Address = "0x9999999999999999999999999999999999999999";
const targetA: Address = "0xaAaAaAaaAaAaAaaAaAAAAAAAAaaaAaAaAaaAaaAa";
const targetB: Address = "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB";
const targetC: Address = "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC";

/** A v0.7 operation of `sender` with a paymaster: 1,000,000 gas in all limits at 10 gwei, so a max cost of 0.01 ETH. */
const op07: UserOperationV07 = {
  sender,
  nonce: 0n,
  callData: "0x",
  callGasLimit: 300_000n,
  verificationGasLimit: 400_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas: parseGwei("10"),
  maxPriorityFeePerGas: parseGwei("1"),
  paymaster,
  paymasterVerificationGasLimit: 150_000n,
  paymasterPostOpGasLimit: 50_000n,
  signature: "0x",
};

/** A v0.6 operation with a paymaster: verification gas counts three times, (100k + 300k + 3 × 200k) × 10 gwei = 0.01 ETH. */
const op06: UserOperationV06 = {
  sender,
  nonce: 0n,
  initCode: "0x",
  callData: "0x",
  callGasLimit: 300_000n,
  verificationGasLimit: 200_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas: parseGwei("10"),
  maxPriorityFeePerGas: parseGwei("1"),
  paymasterAndData: paymaster,
  signature: "0x",
};

function ask(
  overrides: Partial<UserOperation> = {},
  options: { method?: SponsorshipRequest["method"]; apiKey?: string; base?: UserOperation } = {},
): SponsorshipRequest {
  const base = options.base ?? op07;
  const version: EntryPointVersion = "initCode" in base ? "0.6" : "0.7";
  return {
    method: options.method ?? "pm_getPaymasterData",
    userOperation: { ...base, ...overrides } as UserOperation,
    entryPoint: { address: version === "0.6" ? entryPoint06Address : entryPoint07Address, version },
    paymaster,
    chainId: 31337,
    apiKey: options.apiKey,
    context: {},
    request: {},
  };
}

/**
 * The calls of permissionless's SimpleAccount for `version`, as `callData` (the encoding real
 * clients send). permissionless 0.4 knows no v0.9 SimpleAccount: v0.9's `execute` and
 * `executeBatch` are v0.8's, so its v0.8 encoding stands in.
 */
async function simpleAccountCallData(version: "0.6" | "0.7" | "0.8" | "0.9", calls: { to: Address; value?: bigint; data?: Hex }[]): Promise<Hex> {
  const encoding = version === "0.9" ? "0.8" : version;
  const entryPoint = { "0.6": entryPoint06Address, "0.7": entryPoint07Address, "0.8": entryPoint08Address }[encoding];
  const account = await toSimpleSmartAccount({
    client: createPublicClient({ transport: http("http://127.0.0.1:1") }),
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: entryPoint, version: encoding } as never,
    address: sender,
  });
  return account.encodeCalls(calls);
}

describe("capGas", () => {
  const caps = capGas({ maxFeePerGas: parseGwei("20"), maxPreVerificationGas: 500_000n, maxCostPerOperation: parseEther("0.01") });

  it("refuses maxFeePerGas above its cap, naming the cap and its limit", async () => {
    expect(await caps(ask({ maxFeePerGas: parseGwei("200") }))).toEqual({
      sponsor: false,
      reason: "maxFeePerGas 200000000000 wei is above the cap maxFeePerGas of 20000000000 wei",
      data: { cap: "maxFeePerGas", limit: toHex(parseGwei("20")), value: toHex(parseGwei("200")) },
    });
  });

  it("refuses preVerificationGas above its cap, naming the cap and its limit", async () => {
    expect(await caps(ask({ preVerificationGas: 5_000_000n }))).toEqual({
      sponsor: false,
      reason: "preVerificationGas 5000000 is above the cap maxPreVerificationGas of 500000",
      data: { cap: "maxPreVerificationGas", limit: toHex(500_000), value: toHex(5_000_000) },
    });
  });

  it("sponsors an operation whose max cost (every gas limit × maxFeePerGas) is the cap, and refuses one wei more", async () => {
    expect(await caps(ask())).toEqual(sponsor);
    // One more gas of call limit adds 10 gwei to the max cost.
    expect(await caps(ask({ callGasLimit: op07.callGasLimit + 1n }))).toEqual({
      sponsor: false,
      reason: "max cost (gas limits × maxFeePerGas) 10000010000000000 wei is above the cap maxCostPerOperation of 10000000000000000 wei",
      data: { cap: "maxCostPerOperation", limit: toHex(parseEther("0.01")), value: toHex(parseEther("0.01") + parseGwei("10")) },
    });
    // The paymaster's own limits count too.
    expect((await caps(ask({ paymasterPostOpGasLimit: 50_001n }))).sponsor).toBe(false);
  });

  it("counts a v0.6 operation's verification gas three times, as the EntryPoint reserves it with a paymaster", async () => {
    expect(await caps(ask({}, { base: op06 }))).toEqual(sponsor);
    expect(await caps(ask({ verificationGasLimit: op06.verificationGasLimit + 1n }, { base: op06 }))).toMatchObject({
      sponsor: false,
      data: { cap: "maxCostPerOperation", value: toHex(parseEther("0.01") + 3n * parseGwei("10")) },
    });
  });

  it("does not cap stub data, which no trusted key signs", async () => {
    expect(await caps(ask({ preVerificationGas: 5_000_000n, maxFeePerGas: parseGwei("200") }, { method: "pm_getPaymasterStubData" }))).toEqual(sponsor);
  });
});

describe("quotaPerWindow, on simulated time", () => {
  it("allows so many signatures in any window of windowSeconds, and the next once the oldest leaves it", async () => {
    const clock = createSimulatedClock(1_000_000);
    const quota = quotaPerWindow({ windowSeconds: 60, operations: 2, cost: parseEther("1") }, clock);
    expect(await quota(ask())).toEqual(sponsor);
    await clock.advanceBy(10_000);
    expect(await quota(ask())).toEqual(sponsor);
    await clock.advanceBy(10_000);
    expect(await quota(ask())).toEqual({
      sponsor: false,
      reason: "quota of 2 operations per 60 s reached; the next frees up in 40 s",
      data: { cap: "quota.operations", limit: 2 },
    });
    await clock.advanceBy(39_999);
    expect((await quota(ask())).sponsor).toBe(false);
    await clock.advanceBy(1);
    expect(await quota(ask())).toEqual(sponsor);
    // The second signature (at 10 s) is still in the window, and the third just taken.
    expect((await quota(ask())).sponsor).toBe(false);
  });

  it("counts each signature at its max cost and refuses the one that would pass the window's wei", async () => {
    const clock = createSimulatedClock(0);
    const quota = quotaPerWindow({ windowSeconds: 3600, operations: 100, cost: parseEther("0.025") }, clock);
    expect(await quota(ask())).toEqual(sponsor);
    expect(await quota(ask())).toEqual(sponsor);
    expect(await quota(ask())).toEqual({
      sponsor: false,
      reason: "quota of 25000000000000000 wei per 3600 s would be exceeded: 20000000000000000 wei signed, this operation may cost 10000000000000000 wei",
      data: { cap: "quota.cost", limit: toHex(parseEther("0.025")), used: toHex(parseEther("0.02")), value: toHex(parseEther("0.01")) },
    });
    // A cheaper operation still fits: half the gas limits.
    expect(await quota(ask({ maxFeePerGas: parseGwei("5") }))).toEqual(sponsor);
  });

  it("does not count stub data", async () => {
    const quota = quotaPerWindow({ windowSeconds: 60, operations: 1, cost: parseEther("1") }, createSimulatedClock(0));
    for (let i = 0; i < 3; i++) expect(await quota(ask({}, { method: "pm_getPaymasterStubData" }))).toEqual(sponsor);
    expect(await quota(ask())).toEqual(sponsor);
    expect((await quota(ask())).sponsor).toBe(false);
  });
});

describe("allowlists", () => {
  it("onlySenders sponsors listed senders only, whatever the case of their address", async () => {
    const policy = onlySenders([sender.toUpperCase().replace("0X", "0x") as Address]);
    expect(await policy(ask())).toEqual(sponsor);
    const stranger = "0x2222222222222222222222222222222222222222";
    expect(await policy(ask({ sender: stranger }))).toEqual({
      sponsor: false,
      reason: `sender ${stranger} is not in this key's sender allowlist`,
      data: { cap: "senders", sender: stranger },
    });
  });

  it.each(["0.6", "0.7", "0.8", "0.9"] as const)("reads the targets of SimpleAccount v%s's execute and executeBatch", async (version) => {
    expect(simpleAccountCallTargets(await simpleAccountCallData(version, [{ to: targetA, value: 1n, data: "0x1234" }]))).toEqual([targetA]);
    const batch = await simpleAccountCallData(version, [{ to: targetB, data: "0x12" }, { to: targetA }, { to: targetB, data: "0x34" }]);
    expect(simpleAccountCallTargets(batch)).toEqual([targetB, targetA, targetB]);
  });

  it.each(["0.6", "0.7", "0.8", "0.9"] as const)("onlyTargets on v%s: sponsors calls to listed targets only; one unlisted call in a batch refuses it", async (version) => {
    const policy = onlyTargets([targetA, targetB]);
    const listed = await simpleAccountCallData(version, [{ to: targetA }, { to: targetB }]);
    expect(await policy(ask({ callData: listed }))).toEqual(sponsor);
    const oneUnlisted = await simpleAccountCallData(version, [{ to: targetA }, { to: targetC }]);
    expect(await policy(ask({ callData: oneUnlisted }))).toEqual({
      sponsor: false,
      reason: `call target ${targetC} is not in this key's target allowlist`,
      data: { cap: "targets", target: targetC },
    });
  });

  it("onlyTargets refuses callData it cannot decode, or that calls nothing", async () => {
    const policy = onlyTargets([targetA]);
    const unknown = {
      sponsor: false,
      reason:
        "this key sponsors only calls to listed targets, and the operation's callData is not a call this endpoint decodes (SimpleAccount execute or executeBatch)",
      data: { cap: "targets" },
    };
    // An ERC-7579 account's execute(bytes32 mode, bytes calls): another shape, whatever it calls.
    const erc7579 = `0xe9ae5c53${"00".repeat(32)}${"00".repeat(31)}40${"00".repeat(31)}14${targetA.slice(2)}${"00".repeat(12)}` as Hex;
    for (const callData of ["0x", "0x12345678", erc7579] as Hex[]) expect(await policy(ask({ callData }))).toEqual(unknown);
    const emptyBatch = encodeFunctionData({
      abi: parseAbi(["function executeBatch(address[] dest, uint256[] value, bytes[] func)"]),
      args: [[], [], []],
    });
    expect(await policy(ask({ callData: emptyBatch }))).toEqual(unknown);
  });
});

describe("byApiKey", () => {
  const limited = (name: string): SponsorshipPolicy => () => refuse(`reached ${name}`);
  const policy = byApiKey([
    { apiKey: "first-key-0123456789", policy: () => sponsor },
    { apiKey: "second-key-0123456789", policy: limited("second") },
  ]);

  it("asks the policy of the key presented", async () => {
    expect(await policy(ask({}, { apiKey: "first-key-0123456789" }))).toEqual(sponsor);
    expect(await policy(ask({}, { apiKey: "second-key-0123456789" }))).toEqual(refuse("reached second"));
  });

  it("refuses no key, an unknown key, and a prefix or extension of a real one", async () => {
    expect(await policy(ask())).toMatchObject({ sponsor: false, reason: expect.stringMatching(/^an API key is required/) });
    expect(await policy(ask({}, { apiKey: "" }))).toMatchObject({ sponsor: false, reason: expect.stringMatching(/^an API key is required/) });
    for (const apiKey of ["other-key-0123456789", "first-key-012345678", "first-key-01234567890", "FIRST-KEY-0123456789"]) {
      expect(await policy(ask({}, { apiKey }))).toEqual({ sponsor: false, reason: "unknown API key", data: { cap: "apiKey" } });
    }
  });
});

describe("allOf and the configured policy", () => {
  it("answers the first refusal and asks no later policy, so a quota counts only what passed the others", async () => {
    const clock = createSimulatedClock(0);
    const policy = allOf(onlySenders([sender]), quotaPerWindow({ windowSeconds: 60, operations: 1, cost: parseEther("1") }, clock));
    expect((await policy(ask({ sender: targetA }))).sponsor).toBe(false);
    expect(await policy(ask())).toEqual(sponsor);
  });

  it("keeps each key's quota apart", async () => {
    const clock = createSimulatedClock(0);
    const limits = { maxCostPerOperation: parseEther("0.01"), quota: { windowSeconds: 60, operations: 1, cost: parseEther("1") } };
    const policy = createConfiguredSponsorshipPolicy(
      { validForSeconds: 90, keys: [{ name: "a", apiKey: "key-a-0123456789abcdef", ...limits }, { name: "b", apiKey: "key-b-0123456789abcdef", ...limits }] },
      clock,
    );
    expect(await policy(ask({}, { apiKey: "key-a-0123456789abcdef" }))).toEqual(sponsor);
    expect((await policy(ask({}, { apiKey: "key-a-0123456789abcdef" }))).sponsor).toBe(false);
    expect(await policy(ask({}, { apiKey: "key-b-0123456789abcdef" }))).toEqual(sponsor);
  });

  it("the devnet's open policy sponsors a caller with no key, and still refuses the issue's drain", async () => {
    const policy = limitsPolicy(devnetSponsorLimits, createSimulatedClock(0));
    expect(await policy(ask())).toEqual(sponsor);
    expect(await policy(ask({ preVerificationGas: 5_000_000n, maxFeePerGas: parseGwei("200") }))).toMatchObject({
      sponsor: false,
      data: { cap: "maxFeePerGas", limit: toHex(parseGwei("100")) },
    });
    expect(await policy(ask({ preVerificationGas: 5_000_000n }))).toMatchObject({ sponsor: false, data: { cap: "maxPreVerificationGas", limit: toHex(1_000_000) } });
  });

  it("applies a key's sender and target allowlists, then its caps", async () => {
    const policy = createConfiguredSponsorshipPolicy(
      {
        validForSeconds: 90,
        keys: [{ name: "app", apiKey: "app-key-0123456789abc", senders: [sender], targets: [targetA], maxCostPerOperation: parseEther("0.01"), quota: { windowSeconds: 60, operations: 10, cost: parseEther("1") } }],
      },
      createSimulatedClock(0),
    );
    const apiKey = "app-key-0123456789abc";
    const toA = await simpleAccountCallData("0.7", [{ to: targetA }]);
    expect(await policy(ask({ callData: toA }, { apiKey }))).toEqual(sponsor);
    expect(await policy(ask({ callData: toA, sender: targetB }, { apiKey }))).toMatchObject({ data: { cap: "senders" } });
    expect(await policy(ask({ callData: await simpleAccountCallData("0.7", [{ to: targetB }]) }, { apiKey }))).toMatchObject({ data: { cap: "targets" } });
    expect(await policy(ask({ callData: toA, maxFeePerGas: parseGwei("11") }, { apiKey }))).toMatchObject({ data: { cap: "maxCostPerOperation" } });
  });
});
