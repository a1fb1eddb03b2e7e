import { type EntryPointVersion, verifyingPaymasterData } from "@bundlekit/devnet";
import { concat, encodeAbiParameters, getAddress, type Hex } from "viem";
import type { SmartAccount } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultBundlerSettings } from "../src/engine/settings.ts";
import { type Bundler, createBundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import { type Clock, systemClock } from "../src/ports/clock.ts";
import type { Simulator } from "../src/ports/simulator.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { createSimulator } from "../src/validation/create-simulator.ts";
import { engineFixture, rejection, testSigner, unestimatedGas } from "./fixtures.ts";

/**
 * -32503 from the engine's own path, on a real anvil, at an instant the test chooses: the engine's
 * clock stands still at `now`, so each bound is tested one second either side. The paymaster's
 * window is the devnet verifying paymaster's, signed for the bounds the test picks; SimpleAccount
 * returns no window of its own, so the account's is what a Simulator at the port reports.
 */
let fixture: Awaited<ReturnType<typeof engineFixture>>;
/** Deploys the accounts, on the wall clock. */
let walltimeBundler: Bundler;
/** The engine's time, in seconds: the chain's at the start, and never moving. */
let now: number;
const frozenClock: Clock = { ...systemClock, now: () => now * 1000 };

beforeAll(async () => {
  fixture = await engineFixture();
  now = Number((await fixture.client.getBlock()).timestamp);
  ({ bundler: walltimeBundler } = await fixture.makeBundler());
}, 60_000);
afterAll(async () => {
  await walltimeBundler?.stop();
  await fixture?.devnet.stop();
});

const hex = (value: number | bigint) => `0x${value.toString(16)}`;
const noEnd = "0xffffffffffff";

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)(
  "the validity window on EntryPoint v%s",
  (version: EntryPointVersion) => {
    const entryPoint = () => fixture.devnet.deployments[version].entryPoint;
    const paymaster = () => fixture.devnet.deployments[version].paymasters.verifying;
    let bundler: Bundler;
    beforeAll(async () => {
      ({ bundler } = await fixture.makeBundler({ clock: frozenClock }));
    });
    afterAll(() => bundler?.stop());

    /** A SimpleAccount of a fresh owner, funded and deployed by an operation of its own, bundled by an engine on the wall clock. */
    async function deployedAccount(): Promise<SmartAccount> {
      const account = await fixture.makeAccount(version);
      const deployment = await fixture.makeOperation(walltimeBundler, account, {
        to: account.address,
        value: 0n,
      });
      await walltimeBundler.sendUserOperation(deployment, entryPoint());
      expect(await walltimeBundler.sendBundleNow()).toHaveLength(1);
      return account;
    }

    /** A signed operation of `account` sponsored by the verifying paymaster for `window`, gas from the engine's estimate. */
    async function sponsored(
      account: SmartAccount,
      window: { validUntil?: number; validAfter?: number },
    ): Promise<UserOperation> {
      const stubData = concat([
        encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]),
        await account.getStubSignature(),
      ]);
      const sponsorship = (data: Hex) =>
        version === "0.6"
          ? { initCode: "0x", paymasterAndData: concat([paymaster(), data]) }
          : { paymaster: paymaster(), paymasterData: data };
      const draft = {
        sender: account.address,
        nonce: await account.getNonce(),
        callData: await account.encodeCalls([{ to: account.address, value: 0n }]),
      };
      const stub = {
        ...draft,
        ...unestimatedGas,
        ...sponsorship(stubData),
        signature: await account.getStubSignature(),
      } as UserOperation;
      const estimate = await bundler.estimateUserOperationGas(stub, entryPoint());
      const op = { ...stub, ...estimate } as UserOperation;
      const data = await verifyingPaymasterData({
        client: fixture.client,
        version,
        paymaster: paymaster(),
        userOperation: op as never,
        ...window,
      });
      const signed = {
        ...op,
        ...(version === "0.6" ? { paymasterAndData: data } : { paymasterData: data }),
      } as UserOperation;
      return {
        ...signed,
        signature: await account.signUserOperation({
          ...(signed as object),
          chainId: fixture.devnet.chainId,
        } as never),
      } as UserOperation;
    }

    async function expectOutOfTimeRange(
      op: UserOperation,
      message: string,
      data: Record<string, string>,
    ) {
      const error = await rejection(bundler.sendUserOperation(op, entryPoint()));
      expect(error.code, error.message).toBe(RpcErrorCode.outOfTimeRange);
      expect(error.message).toBe(message);
      expect(error.data).toEqual(data);
    }

    it("refuses a paymaster window that ended 1 s ago, with both bounds and the paymaster in data", async () => {
      const op = await sponsored(await deployedAccount(), {
        validUntil: now - 1,
        validAfter: now - 100,
      });
      await expectOutOfTimeRange(op, `AA32 paymaster expired or not due: validUntil ${now - 1} passed 1 s ago`, {
        validUntil: hex(now - 1),
        validAfter: hex(now - 100),
        paymaster: getAddress(paymaster()),
      });
    });

    it("refuses a paymaster window that starts 1 s from now", async () => {
      const op = await sponsored(await deployedAccount(), { validAfter: now + 1 });
      await expectOutOfTimeRange(op, `AA32 paymaster expired or not due: validAfter ${now + 1} is 1 s from now`, {
        validUntil: noEnd,
        validAfter: hex(now + 1),
        paymaster: getAddress(paymaster()),
      });
    });

    it("refuses a paymaster window that ends now, or 29 s from now: under the 30 s an operation must stay valid to be bundled", async () => {
      const account = await deployedAccount();
      for (const left of [0, 29]) {
        const op = await sponsored(account, { validUntil: now + left });
        await expectOutOfTimeRange(
          op,
          `AA32 paymaster expired or not due: validUntil ${now + left} is within 30 s (${left} s from now): too soon to bundle`,
          {
            validUntil: hex(now + left),
            validAfter: "0x0",
            paymaster: getAddress(paymaster()),
          },
        );
      }
    });

    it("admits a paymaster window from now to 30 s from now", async () => {
      const op = await sponsored(await deployedAccount(), {
        validAfter: now,
        validUntil: now + 30,
      });
      await expect(bundler.sendUserOperation(op, entryPoint())).resolves.toMatch(
        /^0x[0-9a-f]{64}$/,
      );
    });

    it("refuses an account whose own window has ended or not begun, without a paymaster in data", async () => {
      const account = await deployedAccount();
      const op = await sponsored(account, {});
      for (const [window, message] of [
        [
          { validUntil: BigInt(now - 1), validAfter: 0n },
          `AA22 expired or not due: validUntil ${now - 1} passed 1 s ago`,
        ],
        [
          { validUntil: BigInt(now + 3600), validAfter: BigInt(now + 1) },
          `AA22 expired or not due: validAfter ${now + 1} is 1 s from now`,
        ],
      ] as const) {
        const simulator = accountWindow(
          createSimulator(
            fixture.client as unknown as ChainClient,
            fixture.devnet.chainId,
            defaultBundlerSettings.validation,
          ),
          window,
        );
        const engine = await createBundler({
          client: fixture.client as unknown as ChainClient,
          store: createMemoryMempoolStore(),
          signer: testSigner(fixture.devnet.relayerKeys),
          clock: frozenClock,
          simulator,
          settings: { bundling: { mode: "manual" } },
        });
        try {
          const error = await rejection(engine.sendUserOperation(op, entryPoint()));
          expect(error.code, error.message).toBe(RpcErrorCode.outOfTimeRange);
          expect(error.message).toBe(message);
          expect(error.data).toEqual({
            validUntil: hex(window.validUntil),
            validAfter: hex(window.validAfter),
          });
        } finally {
          await engine.stop();
        }
      }
    });
  },
);

/**
 * v0.9: bounds with the top bit set are block numbers. The verifying paymaster signs such a range;
 * the engine checks it against the next block (`head + 1`), which must be inside it with two more
 * blocks to spare, and the EntryPoint then accepts the operation in its bundle.
 */
describe("a validity range in block numbers on EntryPoint v0.9", () => {
  const flag = 0x800000000000;
  const entryPoint = () => fixture.devnet.deployments["0.9"].entryPoint;
  const paymaster = () => fixture.devnet.deployments["0.9"].paymasters.verifying;

  /** A new account's operation, sponsored for the range `windowAt(head)` gives: `head` is the latest block once the account is funded. */
  async function sponsored(
    bundler: Bundler,
    windowAt: (head: number) => { validUntil: number; validAfter: number },
  ) {
    const account = await fixture.makeAccount("0.9");
    const head = Number(await fixture.client.getBlockNumber({ cacheTime: 0 }));
    const window = windowAt(head);
    const stub = {
      sender: account.address,
      nonce: await account.getNonce(),
      callData: await account.encodeCalls([{ to: account.address, value: 0n }]),
      ...(await account.getFactoryArgs()),
      ...unestimatedGas,
      paymaster: paymaster(),
      paymasterData: concat([
        encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]),
        await account.getStubSignature(),
      ]),
      signature: await account.getStubSignature(),
    } as UserOperation;
    const op = {
      ...stub,
      ...(await bundler.estimateUserOperationGas(stub, entryPoint())),
    } as UserOperation;
    const paymasterData = await verifyingPaymasterData({
      client: fixture.client,
      version: "0.9",
      paymaster: paymaster(),
      userOperation: op as never,
      ...window,
    });
    const signed = { ...op, paymasterData } as UserOperation;
    const signature = await account.signUserOperation({
      ...(signed as object),
      chainId: fixture.devnet.chainId,
    } as never);
    return { op: { ...signed, signature } as UserOperation, head, window };
  }

  it("refuses a range that ended, one that has not begun by the next block, and one that ends within two blocks after it (-32503, AA32)", async () => {
    const { bundler } = await fixture.makeBundler();
    try {
      // The messages name the head as the engine reads it when the operation arrives (`now`).
      for (const [windowAt, messageAt] of [
        [
          (head: number) => ({ validUntil: flag + head, validAfter: flag + 1 }),
          (head: number, now: number) =>
            `paymaster validity ended at block ${head}; the next block is ${now + 1}`,
        ],
        [
          (head: number) => ({ validUntil: flag + head + 100, validAfter: flag + head + 50 }),
          (head: number, now: number) =>
            `paymaster validity starts after block ${head + 50}; the next block is ${now + 1}`,
        ],
        [
          (head: number) => ({ validUntil: flag + head + 2, validAfter: flag + 1 }),
          (head: number, now: number) =>
            `paymaster validity ends at block ${head + 2}, ${head + 2 - now} blocks from now: too soon to bundle (at least 3 needed)`,
        ],
      ] as const) {
        const { op, head, window } = await sponsored(bundler, windowAt);
        const message = `AA32 paymaster expired or not due: ${messageAt(head, Number(await fixture.client.getBlockNumber({ cacheTime: 0 })))}`;
        const error = await rejection(bundler.sendUserOperation(op, entryPoint()));
        expect(error.code, error.message).toBe(RpcErrorCode.outOfTimeRange);
        expect(error.message).toBe(message);
        expect(error.data).toEqual({
          validUntilBlock: hex(window.validUntil - flag),
          validAfterBlock: hex(window.validAfter - flag),
          paymaster: getAddress(paymaster()),
        });
      }
    } finally {
      await bundler.stop();
    }
  });

  it("admits a range that holds the next block and more, and the EntryPoint includes the operation", async () => {
    const { bundler } = await fixture.makeBundler();
    try {
      const { op } = await sponsored(bundler, (head) => ({
        validUntil: flag + head + 10,
        validAfter: flag + 1,
      }));
      const hash = await bundler.sendUserOperation(op, entryPoint());
      expect(await bundler.sendBundleNow()).toHaveLength(1);
      expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    } finally {
      await bundler.stop();
    }
  });
});

/** `simulator`, with the account's validation data reporting `window` as if the account had returned it. */
function accountWindow(
  simulator: Simulator,
  window: { validUntil: bigint; validAfter: bigint },
): Simulator {
  return {
    mode: simulator.mode,
    tracer: simulator.tracer,
    close: () => simulator.close(),
    async simulateValidation(entryPoint, op, options) {
      const simulated = await simulator.simulateValidation(entryPoint, op, options);
      return {
        ...simulated,
        validation: {
          ...simulated.validation,
          account: { ...simulated.validation.account, ...window },
        },
      };
    },
  };
}
