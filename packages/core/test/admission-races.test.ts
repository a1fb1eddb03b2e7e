import type { EntryPointVersion } from "@bundlekit/devnet";
import { type Address, type Hash, parseGwei } from "viem";
import type { SmartAccount } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import { debugMethods } from "../src/rpc/debug-methods.ts";
import { createRpcHandler, type JsonRpcResponse, type RpcHandler } from "../src/rpc/handle-request.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { encodeUserOperation } from "../src/userop/codec.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { engineFixture } from "./fixtures.ts";

/**
 * Concurrent `eth_sendUserOperation`s of one sender and nonce, through the JSON-RPC handler on a
 * real anvil: the pool keeps one of them (issue 21, finding 3), and an operation that left the
 * pool unsent can be sent again (finding 10).
 */
describe("admission under concurrent requests", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  const recipient: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  async function engine(config: Parameters<typeof fx.makeBundler>[0] = {}) {
    const { bundler } = await fx.makeBundler(config);
    const changes: StatusChange[] = [];
    bundler.onStatusChange((change) => changes.push(change));
    return { bundler, changes, handler: createRpcHandler(bundler, { methods: debugMethods }) };
  }

  function call(handler: RpcHandler, method: string, params: unknown[] = []): Promise<JsonRpcResponse> {
    return handler.handle({ jsonrpc: "2.0", id: 1, method, params }) as Promise<JsonRpcResponse>;
  }

  const send = (handler: RpcHandler, op: UserOperation, account: SmartAccount) =>
    call(handler, "eth_sendUserOperation", [encodeUserOperation(op), account.entryPoint.address]);

  /**
   * `count` signed operations of `account` with one nonce and equal fees, `feeBump` wei above the
   * engine's estimate, told apart by the value they send.
   */
  async function sameNonce(bundler: Bundler, account: SmartAccount, count: number, feeBump = 0n): Promise<UserOperation[]> {
    const draft = await fx.makeOperation(bundler, account, { to: recipient, value: 1n });
    const fees = { maxFeePerGas: draft.maxFeePerGas + feeBump, maxPriorityFeePerGas: draft.maxPriorityFeePerGas + feeBump };
    return Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const op = { ...draft, ...fees, callData: await account.encodeCalls([{ to: recipient, value: BigInt(i + 1) }]) };
        return { ...op, signature: await account.signUserOperation({ ...op, chainId: fx.devnet.chainId } as never) } as UserOperation;
      }),
    );
  }

  const accepted = (responses: JsonRpcResponse[]) => responses.flatMap((r) => ("result" in r ? [r.result as Hash] : []));
  const refused = (responses: JsonRpcResponse[]) => responses.flatMap((r) => ("error" in r ? [r.error] : []));

  it.each<EntryPointVersion>(["0.6", "0.7", "0.8", "0.9"])(
    "v%s: of four concurrent operations with one sender, nonce and fees, one is accepted and the others refused as underpriced replacements (-32602)",
    async (version) => {
      const { bundler, handler } = await engine();
      const account = await fx.makeAccount(version);
      const ops = await sameNonce(bundler, account, 4);
      const responses = await Promise.all(ops.map((op) => send(handler, op, account)));
      expect(accepted(responses)).toHaveLength(1);
      expect(refused(responses)).toHaveLength(3);
      for (const error of refused(responses)) {
        expect(error).toMatchObject({ code: RpcErrorCode.invalidParams, message: expect.stringMatching(/^replacement underpriced: an operation with this sender and nonce is pending/) });
      }
      const [hash] = accepted(responses);
      expect((await bundler.dumpMempool(account.entryPoint.address)).map((e) => e.userOpHash)).toEqual([hash]);
      await bundler.sendBundleNow();
      expect((await bundler.getUserOperationReceipt(hash!))?.success).toBe(true);
    },
  );

  it("one sender's 20 concurrent operations of one nonce cannot evict a small pool's honest operations", async () => {
    // Room for the honest operations (one per version) and one of the attacker's.
    const { bundler, handler, changes } = await engine({ settings: { mempool: { maxSize: 4 } } });
    const honest: Hash[] = [];
    for (const version of ["0.7", "0.8", "0.9"] as const) {
      const account = await fx.makeAccount(version);
      const [op] = await sameNonce(bundler, account, 1);
      const response = await send(handler, op!, account);
      honest.push(accepted([response])[0]!);
    }
    // Higher fees than the honest operations: a full pool evicts the lowest first.
    const attacker = await fx.makeAccount("0.7");
    const responses = await Promise.all((await sameNonce(bundler, attacker, 20, parseGwei("1"))).map((op) => send(handler, op, attacker)));
    expect(accepted(responses)).toHaveLength(1);
    await bundler.sendBundleNow();
    expect(changes.filter((c) => c.status === "dropped")).toEqual([]);
    for (const hash of [...honest, ...accepted(responses)]) expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
  });

  it("an operation dropped by debug_bundler_clearMempool can be sent again, and is included", async () => {
    const { bundler, handler, changes } = await engine();
    const account = await fx.makeAccount("0.7");
    const [op] = await sameNonce(bundler, account, 1);
    const hash = accepted([await send(handler, op!, account)])[0]!;
    expect(await call(handler, "debug_bundler_clearMempool")).toMatchObject({ result: "ok" });
    expect(await call(handler, "eth_getUserOperationByHash", [hash])).toMatchObject({ result: null });

    expect(await send(handler, op!, account)).toMatchObject({ result: hash });
    expect(changes).toEqual([
      { userOpHash: hash, status: "pending" },
      { userOpHash: hash, status: "dropped", reason: "cleared" },
      { userOpHash: hash, status: "pending" },
    ]);
    await bundler.sendBundleNow();
    expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
    // Included: now it is known for good.
    expect(await send(handler, op!, account)).toMatchObject({ error: { code: RpcErrorCode.invalidParams, message: `user operation ${hash} is already known` } });
  });
});
