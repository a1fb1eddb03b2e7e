import { type Address, getAddress, type Hex, parseEther } from "viem";
import { describe, expect, it } from "vitest";
import { canonicalEntryPoints } from "../../entrypoint/version.ts";
import type { NewMempoolEntry } from "../../ports/mempool-store.ts";
import { createMemoryMempoolStore } from "../../mempool/memory-mempool-store.ts";
import {
  fixtureAccount,
  fixtureEntry,
  fixtureFactory,
  fixturePaymaster,
  replacingNothing,
} from "../../../../testing/src/index.ts";
import type { UserOperationV07 } from "../../userop/types.ts";
import type { ValidationResult } from "../../ports/validation-result.ts";
import { answered, onWire, thrownBy } from "../../../test/on-wire.ts";
import { refuseMultipleRoles, refuseUnstakedContext } from "./entity-rules.ts";

const entryPoint = canonicalEntryPoints["0.7"];

describe("EREP-050: only a staked paymaster may return a context (refuseUnstakedContext)", () => {
  const requirement = { minStake: parseEther("1"), minUnstakeDelaySeconds: 86_400 };
  const noStake = { stake: 0n, unstakeDelaySec: 0n };
  /** What validation returned: the paymaster's context and its stake. */
  const validation = (
    paymasterContext: Hex,
    paymasterStake = noStake,
  ): Pick<ValidationResult, "sender" | "factory" | "paymasterStake" | "paymasterContext"> => ({
    paymasterContext,
    paymasterStake,
    sender: noStake,
    factory: noStake,
  });
  const violation = {
    rule: "EREP-050",
    entity: "paymaster",
    address: fixturePaymaster,
    subject: "returns a context of 3 bytes but is not staked",
    allowedIfStaked: { role: "paymaster", address: fixturePaymaster },
  };

  it("refuses an unstaked paymaster's context (-32502), naming its size", async () => {
    const op = (await fixtureEntry({ sponsored: true })).userOperation;
    const error = thrownBy(() => refuseUnstakedContext(op, validation("0x123456") as ValidationResult, requirement));
    expect(error).toMatchObject({ violations: [violation] });
    expect(onWire(error).code).toBe(-32502);
  });

  it("refuses a paymaster staked below the minimum with -32505", async () => {
    const op = (await fixtureEntry({ sponsored: true })).userOperation;
    const short = { stake: parseEther("0.5"), unstakeDelaySec: 86_400n };
    const error = thrownBy(() => refuseUnstakedContext(op, validation("0x123456", short) as ValidationResult, requirement));
    expect(error).toMatchObject({ violations: [violation] });
    expect(onWire(error).code).toBe(-32505);
  });

  it("accepts a staked paymaster's context, an empty context, and an operation without paymaster", async () => {
    const op = (await fixtureEntry({ sponsored: true })).userOperation;
    const staked = { stake: parseEther("1"), unstakeDelaySec: 86_400n };
    const check = (o: typeof op, v: ReturnType<typeof validation>) =>
      refuseUnstakedContext(o, v as ValidationResult, requirement);
    expect(check(op, validation("0x123456", staked))).toBeUndefined();
    expect(check(op, validation("0x"))).toBeUndefined();
    expect(check((await fixtureEntry()).userOperation, validation("0x123456"))).toBeUndefined();
  });
});

describe("STO-040: one address, one role across the pool (refuseMultipleRoles)", () => {
  /** A pooled operation of sender `index` with its factory and paymaster replaced. */
  async function pooled(
    index: number,
    roles: { factory?: Address; paymaster?: Address },
  ): Promise<NewMempoolEntry> {
    const entry = await fixtureEntry({ sponsored: true, sender: index });
    return { ...entry, userOperation: { ...(entry.userOperation as UserOperationV07), ...roles } };
  }

  it.each(["factory", "paymaster"] as const)(
    "refuses a sender that is the %s of another pooled operation (-32502)",
    async (role) => {
      const store = createMemoryMempoolStore();
      const sender = fixtureAccount(0).address;
      await store.admit(await pooled(1, { [role]: sender }), replacingNothing);
      await expect(answered(
        refuseMultipleRoles(store, entryPoint, (await fixtureEntry()).userOperation),
      )).rejects.toMatchObject({
        code: -32502,
        data: {
          violations: [
            {
              rule: "STO-040",
              entity: "account",
              address: sender,
              subject: `is the ${role} of another operation in the mempool`,
            },
          ],
        },
      });
    },
  );

  it.each([
    ["factory", fixtureFactory],
    ["paymaster", fixturePaymaster],
  ] as const)(
    "refuses an operation whose %s is the sender of another pooled operation (-32502)",
    async (role, address) => {
      const store = createMemoryMempoolStore();
      const entry = await fixtureEntry({ sender: 1 });
      await store.admit({ ...entry, userOperation: { ...entry.userOperation, sender: address } }, replacingNothing);
      await expect(
        refuseMultipleRoles(
          store,
          entryPoint,
          (await fixtureEntry({ sponsored: true })).userOperation,
        ),
      ).rejects.toMatchObject({
        violations: [
          {
            rule: "STO-040",
            entity: role,
            address: getAddress(address),
            subject: "is the sender of another operation in the mempool",
          },
        ],
      });
    },
  );

  it("accepts entities in the same roles as in the pool, and a sender that sponsors its own pooled operation", async () => {
    const store = createMemoryMempoolStore();
    const sender = fixtureAccount(0).address;
    await store.admit(await pooled(1, {}), replacingNothing);
    const selfSponsored = await pooled(0, { paymaster: sender });
    await store.admit({
      ...selfSponsored,
      userOperation: { ...selfSponsored.userOperation, nonce: 1n },
    }, replacingNothing);
    await expect(
      refuseMultipleRoles(
        store,
        entryPoint,
        (await fixtureEntry({ sponsored: true })).userOperation,
      ),
    ).resolves.toBeUndefined();
  });
});
