import { type Address, getAddress, parseEther } from "viem";
import { describe, expect, it } from "vitest";
import { parseFailureReason } from "../errors/failure-reason.ts";
import { canonicalEntryPoints } from "../entrypoint/version.ts";
import { createMemoryMempoolStore } from "../mempool/memory-mempool-store.ts";
import { createMemoryReputationStore } from "./memory-reputation-store.ts";
import {
  fixtureAccount,
  fixtureEntry,
  fixtureFactory,
  fixturePaymaster,
  replacingNothing,
} from "../../../testing/src/index.ts";
import {
  accountableEntity,
  createReputation,
  unstakedAllowance,
  type WhitelistedEntities,
} from "./reputation.ts";
import { answered } from "../../test/on-wire.ts";

/**
 * ERC-7562 reputation over the memory stores (the ports' reference implementations). Fixture
 * operations with `sponsored` name a factory and a paymaster; each sender index is its own account.
 */
const entryPoint = canonicalEntryPoints["0.7"];
const sender = fixtureAccount(0).address;
const none: WhitelistedEntities = { account: [], factory: [], paymaster: [] };

function setup(whitelistedEntities: WhitelistedEntities = none) {
  const store = createMemoryReputationStore();
  const mempool = createMemoryMempoolStore();
  const reputation = createReputation(store, mempool, {
    minInclusionDenominator: 10,
    throttlingSlack: 10,
    banSlack: 50,
    whitelistedEntities,
    minStake: parseEther("1"),
    minUnstakeDelaySeconds: 86_400,
  });
  /** Put `count` sponsored operations of other senders (1, 2, …) in the pool. */
  const pool = async (count: number, first = 1) => {
    for (let i = first; i < first + count; i++)
      await mempool.admit(await fixtureEntry({ sponsored: true, sender: i }), replacingNothing);
  };
  const counters = async (address: Address) =>
    (await store.get(entryPoint, [address]))[0] ?? { address, opsSeen: 0, opsIncluded: 0 };
  return { store, mempool, reputation, pool, counters };
}

const sponsored = async (nonce = 0n) =>
  (await fixtureEntry({ sponsored: true, nonce })).userOperation;
const plain = async (nonce = 0n) => (await fixtureEntry({ nonce })).userOperation;
/** Counters that give `status` under ERC-7562's defaults (`opsSeen / 10` against `opsIncluded + slack`). */
const standing = {
  throttled: { opsSeen: 110, opsIncluded: 0 },
  banned: { opsSeen: 510, opsIncluded: 0 },
};

describe("admission by reputation (check: GREP-010, GREP-020)", () => {
  it("refuses an operation whose paymaster is banned (-32504), naming it", async () => {
    const { store, reputation } = setup();
    await store.set(entryPoint, [{ address: fixturePaymaster, ...standing.banned }]);
    await expect(answered(reputation.check(entryPoint, await sponsored()))).rejects.toMatchObject({
      code: -32504,
      message: `paymaster ${fixturePaymaster} is banned`,
      data: { paymaster: fixturePaymaster, status: "banned" },
    });
  });

  it("admits an operation whose entities are unknown or in good standing", async () => {
    const { store, reputation } = setup();
    await store.set(entryPoint, [{ address: fixtureFactory, opsSeen: 109, opsIncluded: 0 }]);
    await expect(reputation.check(entryPoint, await sponsored())).resolves.toBeUndefined();
  });

  it("admits a banned entity that is whitelisted", async () => {
    const { store, reputation } = setup({
      ...none,
      paymaster: [fixturePaymaster.toLowerCase() as Address],
    });
    await store.set(entryPoint, [{ address: fixturePaymaster, ...standing.banned }]);
    await expect(reputation.check(entryPoint, await sponsored())).resolves.toBeUndefined();
  });

  it("a whitelisted address is exempt only in its own role", async () => {
    // Whitelisted as a paymaster, the address is still checked as a factory.
    const { store, reputation } = setup({ ...none, paymaster: [fixtureFactory] });
    await store.set(entryPoint, [{ address: fixtureFactory, ...standing.banned }]);
    await expect(reputation.check(entryPoint, await sponsored())).rejects.toMatchObject({
      message: `factory ${fixtureFactory} is banned`,
    });
  });

  it("admits a throttled factory's fourth operation in the pool, refuses its fifth", async () => {
    const { store, reputation, pool } = setup();
    await store.set(entryPoint, [{ address: fixtureFactory, ...standing.throttled }]);
    await pool(3);
    await expect(reputation.check(entryPoint, await sponsored())).resolves.toBeUndefined();
    await pool(1, 4);
    await expect(answered(reputation.check(entryPoint, await sponsored()))).rejects.toMatchObject({
      code: -32504,
      message: `factory ${fixtureFactory} is throttled`,
      data: { factory: fixtureFactory, status: "throttled" },
    });
  });

  it("counts a throttled sender's own operations in the pool", async () => {
    const { store, mempool, reputation } = setup();
    await store.set(entryPoint, [{ address: sender, ...standing.throttled }]);
    for (const nonce of [0n, 1n, 2n, 3n]) await mempool.admit(await fixtureEntry({ nonce }), replacingNothing);
    await expect(reputation.check(entryPoint, await plain(4n))).rejects.toMatchObject({
      message: `account ${sender} is throttled`,
    });
  });
});

describe("UREP-020: how many operations an unstaked factory or paymaster may have in the pool", () => {
  it("a new one may have 10: the eleventh is refused (-32504), naming the entity and the limit", async () => {
    const { reputation, pool } = setup();
    await pool(9);
    await expect(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: true,
        paymaster: false,
      }),
    ).resolves.toBeUndefined();
    await pool(1, 10);
    await expect(answered(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: true,
        paymaster: false,
      }),
    )).rejects.toMatchObject({
      code: -32504,
      data: { paymaster: fixturePaymaster, limit: 10, rule: "UREP-020" },
    });
    await expect(answered(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: false,
        paymaster: true,
      }),
    )).rejects.toMatchObject({
      data: { factory: fixtureFactory, limit: 10, rule: "UREP-020" },
    });
  });

  it("does not limit staked or whitelisted entities", async () => {
    const { reputation, pool } = setup();
    await pool(10);
    await expect(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: true,
        paymaster: true,
      }),
    ).resolves.toBeUndefined();
    const whitelisted = setup({
      ...none,
      factory: [fixtureFactory],
      paymaster: [fixturePaymaster],
    });
    await whitelisted.pool(10);
    await expect(
      whitelisted.reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: false,
        paymaster: false,
      }),
    ).resolves.toBeUndefined();
  });

  it("does not count the operation being replaced (same sender and nonce)", async () => {
    const { mempool, reputation, pool } = setup();
    await pool(9);
    await mempool.admit(await fixtureEntry({ sponsored: true, nonce: 5n }), replacingNothing);
    await expect(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(5n), {
        factory: true,
        paymaster: false,
      }),
    ).resolves.toBeUndefined();
    await expect(answered(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(6n), {
        factory: true,
        paymaster: false,
      }),
    )).rejects.toMatchObject({ data: { limit: 10 } });
  });

  it("grows with the entity's inclusion record", async () => {
    const { store, reputation, pool } = setup();
    // 10 + (10 / 20) × 10 = 15.
    await store.set(entryPoint, [{ address: fixturePaymaster, opsSeen: 20, opsIncluded: 10 }]);
    await pool(14);
    await expect(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: true,
        paymaster: false,
      }),
    ).resolves.toBeUndefined();
    await pool(1, 15);
    await expect(answered(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: true,
        paymaster: false,
      }),
    )).rejects.toMatchObject({ data: { limit: 15 } });
  });

  it("reads each entity's own inclusion record", async () => {
    const { store, reputation, pool } = setup();
    // The factory's record allows it 15; the paymaster, never seen, has 10.
    await store.set(entryPoint, [{ address: fixtureFactory, opsSeen: 20, opsIncluded: 10 }]);
    await pool(10);
    await expect(answered(
      reputation.checkUnstakedAllowance(entryPoint, await sponsored(), {
        factory: false,
        paymaster: false,
      }),
    )).rejects.toMatchObject({
      data: { paymaster: fixturePaymaster, limit: 10 },
    });
  });

  it("does not limit the sender: an account is limited by its own count (UREP-010)", async () => {
    const { mempool, reputation } = setup();
    // Ten pooled operations name the sender as their paymaster.
    for (let i = 1; i <= 10; i++) {
      const entry = await fixtureEntry({ sponsored: true, sender: i });
      await mempool.admit({ ...entry, userOperation: { ...entry.userOperation, paymaster: sender } }, replacingNothing);
    }
    await expect(
      reputation.checkUnstakedAllowance(entryPoint, await plain(), {
        factory: false,
        paymaster: false,
      }),
    ).resolves.toBeUndefined();
  });

  it("the allowance is 10 + inclusionRate × min(opsIncluded, 10,000), rounded down", () => {
    expect(unstakedAllowance(undefined)).toBe(10);
    expect(unstakedAllowance({ opsSeen: 0, opsIncluded: 0 })).toBe(10);
    expect(unstakedAllowance({ opsSeen: 20, opsIncluded: 10 })).toBe(15);
    expect(unstakedAllowance({ opsSeen: 30, opsIncluded: 10 })).toBe(13); // 3.33…
    expect(unstakedAllowance({ opsSeen: 30_000, opsIncluded: 20_000 })).toBe(6_676); // 2/3 × 10,000
  });
});

describe("counting an operation's life", () => {
  it("admitted: counts the factory and paymaster as seen, and the sender only when staked", async () => {
    const { reputation, counters } = setup();
    await reputation.admitted(entryPoint, await sponsored(), { senderStaked: false });
    expect(await counters(fixtureFactory)).toEqual({
      address: fixtureFactory,
      opsSeen: 1,
      opsIncluded: 0,
    });
    expect(await counters(fixturePaymaster)).toEqual({
      address: fixturePaymaster,
      opsSeen: 1,
      opsIncluded: 0,
    });
    expect((await counters(sender)).opsSeen).toBe(0);
    await reputation.admitted(entryPoint, await sponsored(1n), { senderStaked: true });
    expect((await counters(sender)).opsSeen).toBe(1);
    expect((await counters(fixturePaymaster)).opsSeen).toBe(2);
  });

  it("admitted as a replacement: takes back the seen count of the operation it replaced (GREP-050)", async () => {
    const { reputation, counters } = setup();
    await reputation.admitted(entryPoint, await sponsored(), { senderStaked: true });
    await reputation.admitted(entryPoint, await plain(), {
      senderStaked: true,
      replaced: await sponsored(),
    });
    expect((await counters(fixtureFactory)).opsSeen).toBe(0);
    expect((await counters(fixturePaymaster)).opsSeen).toBe(0);
    expect((await counters(sender)).opsSeen).toBe(1);
  });

  it("included: counts every entity of the operation", async () => {
    const { store, reputation, counters } = setup();
    await store.set(
      entryPoint,
      [sender, fixtureFactory, fixturePaymaster].map((address) => ({
        address,
        opsSeen: 3,
        opsIncluded: 1,
      })),
    );
    await reputation.included(entryPoint, await sponsored());
    for (const address of [sender, fixtureFactory, fixturePaymaster])
      expect(await counters(address)).toEqual({ address, opsSeen: 3, opsIncluded: 2 });
  });

  it.each([
    {
      reason: "AA33 reverted",
      staked: [],
      blamed: fixturePaymaster,
      cleared: [sender, fixtureFactory],
    },
    {
      reason: "AA23 reverted",
      staked: [],
      blamed: sender,
      cleared: [fixtureFactory, fixturePaymaster],
    },
    {
      reason: "AA13 initCode failed or OOG",
      staked: [],
      blamed: fixtureFactory,
      cleared: [sender, fixturePaymaster],
    },
    {
      reason: "AA23 reverted",
      staked: ["factory"],
      blamed: fixtureFactory,
      cleared: [sender, fixturePaymaster],
    },
    // AA10: the sender exists already, its own state: never the factory's doing, staked or not.
    {
      reason: "AA10 sender already constructed",
      staked: ["factory"],
      blamed: sender,
      cleared: [fixtureFactory, fixturePaymaster],
    },
    {
      reason: "AA33 reverted",
      staked: ["account"],
      blamed: sender,
      cleared: [fixtureFactory, fixturePaymaster],
    },
  ] as const)(
    "rejected for $reason with $staked staked: $blamed keeps its seen count, the others get it back (EREP-015)",
    async ({ reason, staked, blamed, cleared }) => {
      const { store, reputation, counters } = setup();
      await store.set(
        entryPoint,
        [sender, fixtureFactory, fixturePaymaster].map((address) => ({
          address,
          opsSeen: 5,
          opsIncluded: 0,
        })),
      );
      await reputation.rejected(entryPoint, await sponsored(), parseFailureReason(reason), staked);
      expect((await counters(blamed)).opsSeen).toBe(5);
      for (const address of cleared) expect((await counters(address)).opsSeen).toBe(4);
    },
  );

  it("rejected for a reason that blames no entity: nobody gets a seen count back", async () => {
    const { store, reputation, counters } = setup();
    await store.set(
      entryPoint,
      [sender, fixtureFactory, fixturePaymaster].map((address) => ({
        address,
        opsSeen: 5,
        opsIncluded: 0,
      })),
    );
    await reputation.rejected(entryPoint, await sponsored(), parseFailureReason("AA95 out of gas"));
    for (const address of [sender, fixtureFactory, fixturePaymaster])
      expect((await counters(address)).opsSeen).toBe(5);
  });
});

describe("accountableEntity (EREP-020, EREP-030)", () => {
  const entity = (role: string, address: Address) => ({ role, address: getAddress(address) });
  it("is the entity the failure code names", async () => {
    const op = await sponsored();
    expect(accountableEntity(op, parseFailureReason("AA13 initCode failed"), [])).toEqual(
      entity("factory", fixtureFactory),
    );
    expect(accountableEntity(op, parseFailureReason("AA24 signature error"), [])).toEqual(
      entity("account", sender),
    );
    expect(accountableEntity(op, parseFailureReason("AA34 signature error"), [])).toEqual(
      entity("paymaster", fixturePaymaster),
    );
    expect(accountableEntity(op, parseFailureReason("execution reverted"), [])).toBeUndefined();
  });

  it("a staked factory answers for the account it deploys; without a factory the account answers", async () => {
    expect(
      accountableEntity(await sponsored(), parseFailureReason("AA24 signature error"), ["factory"]),
    ).toEqual(entity("factory", fixtureFactory));
    expect(
      accountableEntity(await plain(), parseFailureReason("AA24 signature error"), ["factory"]),
    ).toEqual(entity("account", sender));
  });

  it("a staked factory answers only for the account, not for the paymaster", async () => {
    expect(
      accountableEntity(await sponsored(), parseFailureReason("AA34 signature error"), ["factory"]),
    ).toEqual(entity("paymaster", fixturePaymaster));
  });

  it("a staked account answers for its paymaster, not for its factory", async () => {
    expect(
      accountableEntity(await sponsored(), parseFailureReason("AA34 signature error"), ["account"]),
    ).toEqual(entity("account", sender));
    expect(
      accountableEntity(await sponsored(), parseFailureReason("AA13 initCode failed"), ["account"]),
    ).toEqual(entity("factory", fixtureFactory));
  });
});

describe("reading reputation", () => {
  it("throttled: of the addresses asked, those throttled and not whitelisted, in lower case", async () => {
    const other = fixtureAccount(9).address;
    const { store, reputation } = setup({ ...none, account: [other] });
    await store.set(entryPoint, [
      { address: fixturePaymaster, ...standing.throttled },
      { address: fixtureFactory, ...standing.banned },
      { address: sender, opsSeen: 1, opsIncluded: 0 },
      { address: other, ...standing.throttled },
    ]);
    const throttled = await reputation.throttled(entryPoint, [
      fixturePaymaster,
      fixtureFactory,
      sender,
      other,
    ]);
    expect(throttled).toEqual(new Set([fixturePaymaster.toLowerCase()]));
  });

  it("dump: every tracked entity with its status; a whitelisted one is ok whatever its counters", async () => {
    const { store, reputation } = setup({ ...none, factory: [fixtureFactory] });
    await store.set(entryPoint, [
      { address: fixturePaymaster, ...standing.throttled },
      { address: fixtureFactory, ...standing.banned },
      { address: sender, ...standing.banned },
    ]);
    const dump = await reputation.dump(entryPoint.toLowerCase() as Address);
    expect(new Map(dump.map((e) => [e.address, e]))).toEqual(
      new Map([
        [
          fixturePaymaster,
          { address: fixturePaymaster, ...standing.throttled, status: "throttled" },
        ],
        [fixtureFactory, { address: fixtureFactory, ...standing.banned, status: "ok" }],
        [sender, { address: sender, ...standing.banned, status: "banned" }],
      ]),
    );
  });

  it("penalize (GREP-040): the entity's counters become 10,000 seen and 0 included, so it is banned; a whitelisted one is left alone", async () => {
    const { store, reputation, counters } = setup({ ...none, paymaster: [fixturePaymaster] });
    await store.set(entryPoint, [{ address: fixtureFactory, opsSeen: 3, opsIncluded: 2 }]);
    await reputation.penalize(entryPoint, fixtureFactory);
    await reputation.penalize(entryPoint, fixturePaymaster);
    expect(await counters(fixtureFactory)).toEqual({
      address: fixtureFactory,
      opsSeen: 10_000,
      opsIncluded: 0,
    });
    expect(await store.get(entryPoint, [fixturePaymaster])).toEqual([]);
    expect(
      (await reputation.dump(entryPoint)).find((e) => e.address === fixtureFactory)?.status,
    ).toBe("banned");
  });
});
