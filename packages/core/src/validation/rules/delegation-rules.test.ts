import { type Address, getAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { MempoolEntry } from "../../ports/mempool-store.ts";
import { fixtureEntry, fixtureFactory, fixturePaymaster } from "../../../../testing/src/index.ts";
import type { UserOperationV07 } from "../../userop/types.ts";
import { delegateOf, refuseDelegatedEntities, refuseSecondDelegate } from "./delegation-rules.ts";
import { answered, answering } from "../../../test/on-wire.ts";

const delegate: Address = "0xe6Cae83BdE06E4c305530e199D7217f42808555B";
const otherDelegate: Address = "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B";
const designator = (to: Address) => `0xef0100${to.slice(2)}` as Hex;

describe("the EIP-7702 delegation designator (delegateOf)", () => {
  it("reads the address after 0xef0100, checksummed, in either letter case", () => {
    expect(delegateOf(designator(delegate))).toBe(delegate);
    expect(delegateOf(designator(delegate).toUpperCase().replace("0X", "0x") as Hex)).toBe(
      delegate,
    );
  });

  it("is undefined for no code, contract code, or code of another length", () => {
    expect(delegateOf(undefined)).toBeUndefined();
    expect(delegateOf("0x")).toBeUndefined();
    expect(delegateOf(`0x6080${delegate.slice(2)}00` as Hex)).toBeUndefined(); // 23 bytes, no designator
    expect(delegateOf(`${designator(delegate)}00` as Hex)).toBeUndefined();
    expect(delegateOf(designator(delegate).slice(0, -2) as Hex)).toBeUndefined();
  });
});

describe("AUTH-020: an EIP-7702 account may only be a sender (refuseDelegatedEntities)", () => {
  /** A node (at the ChainClient port) where `delegated` are EIP-7702 accounts and everything else is a contract. */
  const node = (delegated: Address[]) => {
    const asked: Address[] = [];
    const getCode = async ({ address }: { address: Address }) => {
      asked.push(address);
      return delegated.includes(address) ? designator(delegate) : ("0x6080" as Hex);
    };
    return { client: { getCode } as never, asked };
  };

  it.each([
    ["factory", fixtureFactory],
    ["paymaster", fixturePaymaster],
  ] as const)(
    "refuses an operation whose %s is an EIP-7702 account (-32502)",
    async (role, address) => {
      const op = (await fixtureEntry({ sponsored: true })).userOperation;
      await expect(answered(refuseDelegatedEntities(node([address]).client, op))).rejects.toMatchObject({
        code: -32502,
        data: {
          rule: "AUTH-020",
          [role]: address,
          violations: [
            {
              rule: "AUTH-020",
              entity: role,
              address,
              subject: `is an EIP-7702 account (delegating to ${delegate}), which may only be a sender`,
            },
          ],
        },
      });
    },
  );

  it("accepts a delegated sender, without reading its code", async () => {
    const op = (await fixtureEntry({ sponsored: true })).userOperation;
    const { client, asked } = node([op.sender]);
    await expect(refuseDelegatedEntities(client, op)).resolves.toBeUndefined();
    expect(asked).toEqual([fixtureFactory, fixturePaymaster]);
  });
});

describe("AUTH-040: one delegate per sender in the pool (refuseSecondDelegate)", () => {
  const eip7702 = async (nonce: bigint, to: Address = delegate) => {
    const entry = await fixtureEntry({ version: "0.8", eip7702: true, nonce });
    const op = entry.userOperation as UserOperationV07;
    return {
      ...entry,
      status: "pending",
      updatedAt: 0,
      userOperation: { ...op, authorization: { ...op.authorization!, address: to } },
    } as MempoolEntry;
  };

  it("refuses an operation whose authorization names another delegate than one pooled (-32502)", async () => {
    const pooled = [await eip7702(0n, otherDelegate)];
    const op = (await eip7702(1n)).userOperation;
    expect(answering(() => refuseSecondDelegate(pooled, op))).toThrow(
      expect.objectContaining({
        code: -32502,
        data: expect.objectContaining({
          violations: [
            {
              rule: "AUTH-040",
              entity: "account",
              address: getAddress(op.sender),
              subject: `has an operation in the mempool whose authorization delegates to ${otherDelegate}, not ${delegate}`,
            },
          ],
        }),
      }),
    );
  });

  it("accepts the same delegate, in any letter case", async () => {
    const pooled = [await eip7702(0n, delegate.toLowerCase() as Address)];
    expect(refuseSecondDelegate(pooled, (await eip7702(1n)).userOperation)).toBeUndefined();
  });

  it("does not count the operation it replaces (same nonce), nor pooled operations without an authorization", async () => {
    const pooled = [
      await eip7702(1n, otherDelegate),
      {
        ...(await eip7702(2n)),
        userOperation: { ...(await eip7702(2n)).userOperation, authorization: undefined },
      },
    ];
    expect(refuseSecondDelegate(pooled, (await eip7702(1n)).userOperation)).toBeUndefined();
  });

  it("has nothing to check for an operation without an authorization, or a v0.6 one", async () => {
    const pooled = [await eip7702(0n, otherDelegate)];
    const plain = (await fixtureEntry({ version: "0.8", nonce: 1n })).userOperation;
    expect(refuseSecondDelegate(pooled, plain)).toBeUndefined();
    expect(
      refuseSecondDelegate(
        pooled,
        (await fixtureEntry({ version: "0.6", nonce: 1n })).userOperation,
      ),
    ).toBeUndefined();
  });
});
