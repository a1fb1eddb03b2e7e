import { type Address, getAddress, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { engineFixture } from "./fixtures.ts";
import { rejection } from "./fixtures.ts";
import { ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * -32505 on a real anvil: an entity whose validation does what only a staked entity may, and that
 * has a stake, but below `minStake` or with an unstake delay below `minUnstakeDelay`, is told
 * which and by how much. An entity with no stake at all still gets -32502. The probes' staked
 * factory and paymaster hold 1 ETH with a 10 s delay; each bundler here asks for more.
 */
let fixture: Awaited<ReturnType<typeof engineFixture>>;
let probes: Awaited<ReturnType<typeof ruleProbesFixture>>;
/** Bundlers by what they count as staked: more stake, a longer delay, both, and exactly what the probes hold. */
const bundlers = {} as Record<"twoEth" | "oneDay" | "both" | "exact", Bundler>;

beforeAll(async () => {
  probes = await ruleProbesFixture();
  fixture = probes.fixture;
  const requirements = {
    twoEth: { minStake: parseEther("2"), minUnstakeDelaySeconds: 10 },
    oneDay: { minStake: parseEther("1"), minUnstakeDelaySeconds: 86_400 },
    both: { minStake: parseEther("2"), minUnstakeDelaySeconds: 86_400 },
    exact: { minStake: parseEther("1"), minUnstakeDelaySeconds: 10 },
  };
  for (const [name, config] of Object.entries(requirements)) {
    bundlers[name as keyof typeof bundlers] = (await fixture.makeBundler({ settings: { reputation: config } })).bundler;
  }
}, 120_000);
afterAll(async () => {
  for (const bundler of Object.values(bundlers)) await bundler.stop();
  await fixture?.devnet.stop();
});

const oneEth = "1000000000000000000";
const twoEth = "2000000000000000000";
const stakeShort = `stake ${oneEth} wei is below the minimum ${twoEth} wei`;
const delayShort = "unstake delay 10 s is below the minimum 86400 s";
const slot0 = `0x${"0".repeat(64)}`;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The -32505 refusal of `sent`: the message in full, and `data` with the entity, its stake, the minimum and the violations. */
async function expectStakeTooLow(
  sent: Promise<unknown>,
  expected: {
    staker: { role: string; address: Address };
    short: string;
    violator: { role: string; address: Address };
    /** The violation's subject, as a regular expression's source. */
    subject: string;
    rule: string;
    minimum: { stake: string; delay: string };
  },
) {
  const error = await rejection(sent);
  const { staker, violator, rule } = expected;
  expect(error.code, error.message).toBe(RpcErrorCode.stakeTooLow);
  expect(error.message).toMatch(
    new RegExp(
      `^${staker.role} ${staker.address} ${escapeRegExp(expected.short)}: ${violator.role} ${violator.address} ${expected.subject} \\(${rule}\\)$`,
    ),
  );
  expect(error.data).toEqual({
    [staker.role]: staker.address,
    stake: "0xde0b6b3a7640000",
    unstakeDelaySec: "0xa",
    minimumStake: expected.minimum.stake,
    minimumUnstakeDelay: expected.minimum.delay,
    rule,
    violations: [
      {
        rule,
        entity: violator.role,
        address: violator.address,
        subject: expect.stringMatching(new RegExp(`^${expected.subject}$`)),
      },
    ],
  });
}

/** ERC-7769's hex quantities of the minimums: 2 ETH or 1 ETH, 10 s or 86,400 s. */
const minimum = {
  twoEth: { stake: "0x1bc16d674ec80000", delay: "0xa" },
  oneDay: { stake: "0xde0b6b3a7640000", delay: "0x15180" },
  both: { stake: "0x1bc16d674ec80000", delay: "0x15180" },
};

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)(
  "stake below the minimum (-32505) on EntryPoint v%s",
  (version) => {
    it("refuses a paymaster with 1 ETH staked where 2 ETH are required when it writes its own storage (STO-031)", async () => {
      const { op, set } = await probes.ruleOp(version, {
        paymasterRule: "OWN_STORAGE",
        staked: true,
      });
      const paymaster = { role: "paymaster", address: getAddress(set.paymaster) };
      await expectStakeTooLow(bundlers.twoEth.sendUserOperation(op, set.entryPoint), {
        staker: paymaster,
        short: stakeShort,
        violator: paymaster,
        subject: escapeRegExp(`writes its own slot ${slot0}, allowed only when staked`),
        rule: "STO-031",
        minimum: minimum.twoEth,
      });
    });

    it("refuses a factory whose unstake delay of 10 s is under a day when it writes its own storage (STO-031)", async () => {
      const { op, set } = await probes.ruleOp(version, {
        factoryRule: "OWN_STORAGE",
        staked: true,
      });
      const factory = { role: "factory", address: getAddress(set.factory) };
      await expectStakeTooLow(bundlers.oneDay.sendUserOperation(op, set.entryPoint), {
        staker: factory,
        short: delayShort,
        violator: factory,
        subject: escapeRegExp(`writes its own slot ${slot0}, allowed only when staked`),
        rule: "STO-031",
        minimum: minimum.oneDay,
      });
    });

    it("names the factory, short of both minimums, when the account it deploys writes its associated storage (STO-022)", async () => {
      const { op, set, sender } = await probes.ruleOp(version, {
        factoryRule: "OK",
        accountRule: "ASSOCIATED_STORAGE",
        staked: true,
      });
      await expectStakeTooLow(bundlers.both.sendUserOperation(op, set.entryPoint), {
        staker: { role: "factory", address: getAddress(set.factory) },
        short: `${stakeShort} and ${delayShort}`,
        violator: { role: "account", address: getAddress(sender) },
        subject: `writes slot 0x[0-9a-f]{64} of ${set.target.toLowerCase()}, associated with an account not yet deployed, and the factory is unstaked`,
        rule: "STO-022",
        minimum: minimum.both,
      });
    });

    it("refuses an account with 1 ETH staked where 2 ETH are required when it reads its own balance (OP-080)", async () => {
      const { op, set, sender } = await probes.ruleOp(version, { accountRule: "SELFBALANCE" });
      await set.stake(sender, 10);
      const account = { role: "account", address: getAddress(sender) };
      await expectStakeTooLow(bundlers.twoEth.sendUserOperation(op, set.entryPoint), {
        staker: account,
        short: stakeShort,
        violator: account,
        subject: escapeRegExp("uses SELFBALANCE, allowed only to a staked entity"),
        rule: "OP-080",
        minimum: minimum.twoEth,
      });
    });

    it("refuses a paymaster with 1 ETH staked where 2 ETH are required when it returns a context (EREP-050)", async () => {
      const { op, set } = await probes.ruleOp(version, {
        paymasterRule: "CONTEXT:32",
        staked: true,
      });
      const paymaster = { role: "paymaster", address: getAddress(set.paymaster) };
      await expectStakeTooLow(bundlers.twoEth.sendUserOperation(op, set.entryPoint), {
        staker: paymaster,
        short: stakeShort,
        violator: paymaster,
        subject: escapeRegExp("returns a context of 32 bytes but is not staked"),
        rule: "EREP-050",
        minimum: minimum.twoEth,
      });
    });

    it("admits the same paymaster where its 1 ETH and 10 s are exactly the minimum", async () => {
      const { op, set } = await probes.ruleOp(version, {
        paymasterRule: "OWN_STORAGE",
        staked: true,
      });
      await expect(bundlers.exact.sendUserOperation(op, set.entryPoint)).resolves.toMatch(
        /^0x[0-9a-f]{64}$/,
      );
    });

    it("keeps -32502 for a paymaster with no stake at all", async () => {
      const { op, set } = await probes.ruleOp(version, { paymasterRule: "OWN_STORAGE" });
      const error = await rejection(bundlers.twoEth.sendUserOperation(op, set.entryPoint));
      expect(error.code, error.message).toBe(RpcErrorCode.opcodeOrStorageRule);
      expect(error.message).toBe(
        `paymaster ${getAddress(set.paymaster)} writes its own slot ${slot0}, allowed only when staked (STO-031)`,
      );
    });

    it("keeps -32502 when the operation also breaks a rule no stake lifts", async () => {
      const { op, set, sender } = await probes.ruleOp(version, {
        accountRule: "TIMESTAMP",
        paymasterRule: "OWN_STORAGE",
        staked: true,
      });
      const error = await rejection(bundlers.twoEth.sendUserOperation(op, set.entryPoint));
      expect(error.code, error.message).toBe(RpcErrorCode.opcodeOrStorageRule);
      expect(error.data).toMatchObject({
        violations: [
          {
            rule: "OP-011",
            entity: "account",
            address: getAddress(sender),
            subject: "uses banned opcode TIMESTAMP",
          },
          {
            rule: "STO-031",
            entity: "paymaster",
            address: getAddress(set.paymaster),
            subject: `writes its own slot ${slot0}, allowed only when staked`,
          },
        ],
      });
    });
  },
);
