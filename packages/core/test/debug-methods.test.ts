import type { EntryPointVersion } from "@bundlekit/devnet";
import { type Address, createWalletClient, type Hash, http, parseEther } from "viem";
import { entryPoint07Abi } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { debugMethods } from "../src/rpc/debug-methods.ts";
import {
  createRpcHandler,
  type JsonRpcError,
  type JsonRpcResponse,
  type RpcHandler,
} from "../src/rpc/handle-request.ts";
import { encodeUserOperation } from "../src/userop/codec.ts";
import type { MempoolStore } from "../src/ports/mempool-store.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import { engineFixture } from "./fixtures.ts";
import { recordStatusChanges } from "./status-changes.ts";

/** The `debug_bundler_*` methods through the JSON-RPC handler, on a real anvil. */
describe("debug_bundler_* methods", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  const recipient: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  async function debugHandler(options: Parameters<typeof fx.makeBundler>[0] = {}) {
    const { bundler, store } = await fx.makeBundler(options);
    return { bundler, store, handler: createRpcHandler(bundler, { methods: debugMethods }) };
  }

  async function call(
    handler: RpcHandler,
    method: string,
    params: unknown[] = [],
  ): Promise<JsonRpcResponse> {
    return (await handler.handle({ jsonrpc: "2.0", id: 7, method, params })) as JsonRpcResponse;
  }

  async function result(
    handler: RpcHandler,
    method: string,
    params: unknown[] = [],
  ): Promise<unknown> {
    const response = await call(handler, method, params);
    if ("error" in response) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
    return response.result;
  }

  async function error(
    handler: RpcHandler,
    method: string,
    params: unknown[] = [],
  ): Promise<JsonRpcError> {
    const response = await call(handler, method, params);
    if (!("error" in response))
      throw new Error(`${method} answered ${JSON.stringify(response.result)}`);
    return response.error;
  }

  /** A signed first operation of a fresh account, in its wire form (bytes in lower case, as ERC-7769 writes them). */
  async function wireOperation(bundler: Bundler, version: EntryPointVersion = "0.7") {
    const account = await fx.makeAccount(version);
    const op = await fx.makeOperation(bundler, account, { to: recipient, value: 1n });
    const wire = encodeUserOperation(op);
    if (typeof wire.initCode === "string") wire.initCode = wire.initCode.toLowerCase();
    return { wire, entryPoint: account.entryPoint.address, sender: account.address };
  }

  it.each<EntryPointVersion>(["0.6", "0.7"])(
    "dumpMempool returns v%s operations exactly as submitted, and only those of the EntryPoint",
    async (version) => {
      const { bundler, handler } = await debugHandler();
      const { wire, entryPoint } = await wireOperation(bundler, version);
      expect(await result(handler, "debug_bundler_dumpMempool", [entryPoint])).toEqual([]);
      await result(handler, "eth_sendUserOperation", [wire, entryPoint]);
      expect(await result(handler, "debug_bundler_dumpMempool", [entryPoint])).toStrictEqual([
        wire,
      ]);
      const other = version === "0.6" ? fx.entryPoints["0.7"] : fx.entryPoints["0.6"];
      expect(await result(handler, "debug_bundler_dumpMempool", [other])).toEqual([]);
    },
  );

  it("clearMempool drops unsent operations with dropped events; clearState clears reputation too", async () => {
    const { bundler, handler } = await debugHandler();
    const changes: StatusChange[] = [];
    bundler.onStatusChange((change) => changes.push(change));
    const { wire, entryPoint } = await wireOperation(bundler);
    const hash = await result(handler, "eth_sendUserOperation", [wire, entryPoint]);

    expect(await result(handler, "debug_bundler_clearMempool")).toBe("ok");
    expect(await result(handler, "debug_bundler_dumpMempool", [entryPoint])).toEqual([]);
    expect(changes.at(-1)).toEqual({ userOpHash: hash, status: "dropped", reason: "cleared" });
    expect(await result(handler, "debug_bundler_sendBundleNow")).toBe("ok");

    await result(handler, "eth_sendUserOperation", [
      (await wireOperation(bundler)).wire,
      entryPoint,
    ]);
    expect(await result(handler, "debug_bundler_dumpReputation", [entryPoint])).toHaveLength(1);
    expect(await result(handler, "debug_bundler_clearState")).toBe("ok");
    expect(await result(handler, "debug_bundler_dumpMempool", [entryPoint])).toEqual([]);
    expect(await result(handler, "debug_bundler_dumpReputation", [entryPoint])).toEqual([]);
  });

  it("sendBundleNow answers ok with nothing pending, else the bundle's transaction hash once it is mined", async () => {
    const { bundler, handler } = await debugHandler();
    expect(await result(handler, "debug_bundler_sendBundleNow")).toBe("ok");
    const { wire, entryPoint } = await wireOperation(bundler);
    const hash = await result(handler, "eth_sendUserOperation", [wire, entryPoint]);
    const transactionHash = await result(handler, "debug_bundler_sendBundleNow");
    expect(transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = (await result(handler, "eth_getUserOperationReceipt", [hash])) as {
      receipt: { transactionHash: string };
    };
    expect(receipt.receipt.transactionHash).toBe(transactionHash);
    expect(await result(handler, "debug_bundler_dumpMempool", [entryPoint])).toEqual([]);
    expect(await result(handler, "debug_bundler_dumpReputation", [entryPoint])).toEqual([
      {
        address: fx.devnet.deployments["0.7"].simpleAccountFactory,
        opsSeen: "0x1",
        opsIncluded: "0x1",
        status: "0x0",
      },
    ]);
  });

  it("setBundlingMode and setBundleInterval switch a running engine to automatic bundling", async () => {
    // The engine keeps house on each tick of its bundling timer (it expires operations past useropsTTL):
    // counting those passes at the store port shows the ticks that went by.
    const store = createMemoryMempoolStore();
    let ticks = 0;
    const ticked = new Set<() => void>();
    const counted: MempoolStore = {
      ...store,
      expire(olderThan, now) {
        ticks++;
        for (const wake of [...ticked]) wake();
        return store.expire(olderThan, now);
      },
    };
    const tickedTwiceMore = () => {
      const target = ticks + 2;
      return new Promise<void>((resolve) => {
        const wake = () => {
          if (ticks < target) return;
          ticked.delete(wake);
          resolve();
        };
        ticked.add(wake);
      });
    };
    const { bundler, handler } = await debugHandler({ store: counted });
    const { change } = recordStatusChanges(bundler);
    bundler.start();
    try {
      expect(await result(handler, "debug_bundler_setBundleInterval", [0.1])).toBe("ok");
      expect(bundler.bundling.intervalMs).toBe(100);
      expect(await result(handler, "debug_bundler_setBundlingMode", ["manual"])).toBe("ok");
      const { wire, entryPoint } = await wireOperation(bundler);
      const hash = (await result(handler, "eth_sendUserOperation", [wire, entryPoint])) as Hash;
      // Two ticks in manual mode with the operation in the pool: nothing is bundled.
      await tickedTwiceMore();
      expect(await result(handler, "eth_getUserOperationReceipt", [hash])).toBeNull();
      expect((await store.get(hash))?.status).toBe("pending");

      expect(await result(handler, "debug_bundler_setBundlingMode", ["auto"])).toBe("ok");
      expect(bundler.bundling.mode).toBe("auto");
      await change(hash, "included");
      expect(await result(handler, "eth_getUserOperationReceipt", [hash])).toMatchObject({ userOpHash: hash, success: true });
    } finally {
      await bundler.stop();
    }
  });

  it("setReputation takes hex or decimal counts; dumpReputation answers hex counts and a numeric status", async () => {
    const { handler } = await debugHandler();
    const entryPoint = fx.entryPoints["0.7"];
    const [ok, throttled, banned] = [
      "0x1111111111111111111111111111111111111111",
      "0x2222222222222222222222222222222222222222",
      "0x3333333333333333333333333333333333333333",
    ] as const;
    const entries = [
      { address: banned, opsSeen: "0x3e8", opsIncluded: "0x0" },
      { address: ok, opsSeen: "0x5", opsIncluded: "0x2", status: "0x2" }, // a status given is ignored
      { address: throttled, opsSeen: 200, opsIncluded: "0" },
    ];
    expect(await result(handler, "debug_bundler_setReputation", [entries, entryPoint])).toBe("ok");
    expect(await result(handler, "debug_bundler_dumpReputation", [entryPoint])).toStrictEqual([
      { address: ok, opsSeen: "0x5", opsIncluded: "0x2", status: "0x0" },
      { address: throttled, opsSeen: "0xc8", opsIncluded: "0x0", status: "0x1" },
      { address: banned, opsSeen: "0x3e8", opsIncluded: "0x0", status: "0x2" },
    ]);
    expect(await result(handler, "debug_bundler_dumpReputation", [fx.entryPoints["0.8"]])).toEqual(
      [],
    );
    expect(await result(handler, "debug_bundler_clearReputation")).toBe("ok");
    expect(await result(handler, "debug_bundler_dumpReputation", [entryPoint])).toEqual([]);
  });

  it("answers -32602 naming the field for bad params", async () => {
    const { handler, bundler } = await debugHandler();
    const entryPoint = fx.entryPoints["0.7"];
    const cases: [string, unknown[], string][] = [
      [
        "debug_bundler_setReputation",
        [[{ opsSeen: "0x1", opsIncluded: "0x0" }], entryPoint],
        "params[0][0].address",
      ],
      [
        "debug_bundler_setReputation",
        [[{ address: recipient, opsSeen: "many", opsIncluded: "0x0" }], entryPoint],
        "params[0][0].opsSeen",
      ],
      [
        "debug_bundler_setReputation",
        [{ address: recipient }, entryPoint],
        "params[0] (reputations)",
      ],
      ["debug_bundler_setReputation", [[]], "params"],
      ["debug_bundler_dumpReputation", ["0x12"], "params[0] (entryPoint)"],
      ["debug_bundler_dumpMempool", [], "params"],
      ["debug_bundler_setBundlingMode", ["sometimes"], "params[0] (mode)"],
      ["debug_bundler_setBundleInterval", ["fast"], "params[0] (interval)"],
      ["debug_bundler_setBundleInterval", [0], "params[0] (interval)"],
      ["debug_bundler_getStakeStatus", ["0x1234", entryPoint], "params[0] (address)"],
      ["debug_bundler_clearState", [1], "params"],
    ];
    for (const [method, params, field] of cases) {
      const failure = await error(handler, method, params);
      expect({
        method,
        code: failure.code,
        field: (failure.data as { field?: string })?.field,
      }).toEqual({
        method,
        code: RpcErrorCode.invalidParams,
        field,
      });
      expect(failure.message).toContain(field);
    }
    const unsupported = await error(handler, "debug_bundler_dumpMempool", [recipient]);
    expect(unsupported.code).toBe(RpcErrorCode.invalidParams);
    expect(unsupported.message).toBe(`EntryPoint ${recipient} not supported; supported: ${bundler.entryPoints.all.map((e) => e.address).join(", ")}`);
  });

  it("getStakeStatus reads a real stake from the EntryPoint and judges it against minStake and minUnstakeDelay", async () => {
    const staker = privateKeyToAccount(fx.devnet.accountKeys[15]!);
    const wallet = createWalletClient({
      chain: fx.client.chain,
      transport: http(fx.devnet.rpcUrl),
      account: staker,
    });
    const entryPoint = fx.entryPoints["0.7"];
    const { handler } = await debugHandler();
    expect(
      await result(handler, "debug_bundler_getStakeStatus", [staker.address, entryPoint]),
    ).toStrictEqual({
      stakeInfo: { addr: staker.address, stake: "0", unstakeDelaySec: "0" },
      isStaked: false,
    });

    const hash = await wallet.writeContract({
      address: entryPoint,
      abi: entryPoint07Abi,
      functionName: "addStake",
      args: [2],
      value: parseEther("1"),
    });
    expect((await fx.client.waitForTransactionReceipt({ hash })).status).toBe("success");
    const staked = { addr: staker.address, stake: "1000000000000000000", unstakeDelaySec: "2" };
    // Default minUnstakeDelay is one day: a 2-second delay is too short.
    expect(
      await result(handler, "debug_bundler_getStakeStatus", [
        staker.address.toLowerCase(),
        entryPoint,
      ]),
    ).toStrictEqual({
      stakeInfo: staked,
      isStaked: false,
    });
    const lenient = await debugHandler({
      settings: { reputation: { minStake: parseEther("1"), minUnstakeDelaySeconds: 2 } },
    });
    expect(
      await result(lenient.handler, "debug_bundler_getStakeStatus", [staker.address, entryPoint]),
    ).toStrictEqual({
      stakeInfo: staked,
      isStaked: true,
    });
    const strict = await debugHandler({
      settings: { reputation: { minStake: parseEther("1.5"), minUnstakeDelaySeconds: 2 } },
    });
    expect(
      await result(strict.handler, "debug_bundler_getStakeStatus", [staker.address, entryPoint]),
    ).toMatchObject({ isStaked: false });
    // Stakes are per EntryPoint.
    expect(
      await result(lenient.handler, "debug_bundler_getStakeStatus", [
        staker.address,
        fx.entryPoints["0.8"],
      ]),
    ).toMatchObject({
      stakeInfo: { stake: "0" },
      isStaked: false,
    });
  });

  it("answers -32601 for every debug method when they are not enabled, exactly like an unknown method", async () => {
    const { bundler } = await fx.makeBundler();
    const handler = createRpcHandler(bundler);
    const unknown = await error(handler, "debug_bundler_noSuchThing");
    expect(unknown.code).toBe(RpcErrorCode.methodNotFound);
    for (const method of Object.keys(debugMethods)) {
      expect(await error(handler, method)).toEqual({
        ...unknown,
        message: unknown.message.replace("debug_bundler_noSuchThing", method),
      });
    }
  });
});
