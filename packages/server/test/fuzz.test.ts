import { seededRandom } from "@bundlekit/core/simulation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/**
 * The service under fuzzed garbage: random bytes, random JSON, and real requests with random
 * values in random places. Every answer must be a JSON-RPC body with a code that says the input
 * was wrong (never an internal error, never a crash), and the service must keep serving.
 */

const random = seededRandom;
type Random = ReturnType<typeof random>;

const methods = [
  "eth_sendUserOperation",
  "eth_estimateUserOperationGas",
  "eth_getUserOperationByHash",
  "eth_getUserOperationReceipt",
  "eth_supportedEntryPoints",
  "eth_chainId",
  "web3_clientVersion",
  "bundler_config",
  "bundler_feeHistory",
  "bundler_getGasPrice",
  "debug_bundler_clearState",
  "eth_subscribe",
  "rpc.discover",
];

const strings = ["", "0x", "0x0", "0x00", "0xg", "0x1", "-0x1", "latest", "BigNumber", "\u0000", "💥", "__proto__", "constructor", `0x${"f".repeat(65)}`, `0x${"ab".repeat(20)}`, `0x${"ab".repeat(32)}`, `0x${"1".repeat(129)}`];
const numbers = [0, -1, 1.5, 2 ** 53, 1e308, -0];

/** A random JSON value, nested up to `depth`. */
function json(r: Random, depth = 3): unknown {
  switch (r.int(depth > 0 ? 8 : 5)) {
    case 0:
      return null;
    case 1:
      return r.next() < 0.5;
    case 2:
      return r.pick(numbers);
    case 3:
      return r.pick(strings);
    case 4:
      return { type: "BigNumber", hex: r.pick(strings) };
    case 5:
      return Array.from({ length: r.int(4) }, () => json(r, depth - 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(5) }, () => [r.pick([...strings, "sender", "nonce", "callData", "factory", "paymaster", "eip7702Auth"]), json(r, depth - 1)]));
  }
}

/** Replace a random field (or add one) of `object` with a random value. */
function mutate(r: Random, object: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...object };
  const keys = Object.keys(copy);
  const key = r.next() < 0.8 && keys.length > 0 ? r.pick(keys) : r.pick(strings);
  if (r.next() < 0.2) delete copy[key];
  else copy[key] = json(r, 2);
  return copy;
}

let fx: ServiceFixture;
let validOps: Record<string, Record<string, unknown>>;
beforeAll(async () => {
  fx = await serviceFixture();
  validOps = {};
  for (const version of ["0.6", "0.7", "0.8", "0.9"] as const) {
    validOps[fx.entryPoint(version)] = await fx.signedOperation(await fx.makeAccount(version));
  }
});
afterAll(() => fx?.close());

/** One fuzzed body, from one of four generators. */
function body(r: Random): string {
  switch (r.int(4)) {
    case 0: // random bytes
      return Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256))).toString("latin1");
    case 1: // random JSON
      return JSON.stringify(json(r, 4)) ?? "null";
    case 2: {
      // a real request with random params
      const request = { jsonrpc: "2.0", id: r.int(1000), method: r.pick(methods), params: Array.from({ length: r.int(4) }, () => json(r, 3)) };
      return JSON.stringify(r.next() < 0.3 ? mutate(r, request) : request);
    }
    default: {
      // a valid operation with one field mutated, sometimes cut short
      const [entryPoint, op] = r.pick(Object.entries(validOps));
      const text = JSON.stringify({ jsonrpc: "2.0", id: 1, method: r.pick(["eth_sendUserOperation", "eth_estimateUserOperationGas"]), params: [mutate(r, op), entryPoint] });
      return r.next() < 0.2 ? text.slice(0, r.int(text.length)) : text;
    }
  }
}

const inputErrors = [-32700, -32600, -32601, -32602, -32500, -32501, -32502, -32503, -32504, -32505, -32507, -32508, -32521];

function expectJsonRpcAnswer(answer: unknown, input: string) {
  const answers = Array.isArray(answer) ? answer : [answer];
  for (const a of answers) {
    expect(a, input).toMatchObject({ jsonrpc: "2.0" });
    expect("result" in a || "error" in a, input).toBe(true);
    if ("error" in a) {
      expect(inputErrors, `${input} → ${JSON.stringify(a.error)}`).toContain(a.error.code);
      expect(typeof a.error.message, input).toBe("string");
    }
  }
}

describe("fuzzed garbage", () => {
  it.each([1, 2, 3, 4])("seed %i: 150 bodies, each answered with a JSON-RPC body", async (seed) => {
    const r = random(seed);
    for (let i = 0; i < 150; i++) {
      const input = body(r);
      const response = await fetch(fx.service.url, { method: "POST", headers: { "content-type": "application/json" }, body: input });
      const text = await response.text();
      if (response.status === 204) {
        expect(text, input).toBe(""); // only notifications go unanswered
        continue;
      }
      expect([200, 413], input).toContain(response.status);
      expect(response.headers.get("content-type"), input).toMatch(/application\/json/);
      expectJsonRpcAnswer(JSON.parse(text), input);
    }
  });

  it("seed 5: 150 bodies over one WebSocket connection, each answered, the connection kept", async () => {
    const r = random(5);
    const socket = new WebSocket(fx.service.webSocketUrl);
    const inbox: unknown[] = [];
    let arrived: (() => void) | undefined;
    socket.addEventListener("message", (event) => {
      inbox.push(JSON.parse(String(event.data)));
      arrived?.();
    });
    await new Promise((resolve, reject) => {
      socket.addEventListener("open", resolve, { once: true });
      socket.addEventListener("error", reject, { once: true });
    });
    /** Messages until the answer to the sentinel request that follows each body. */
    async function answersTo(input: string, sentinel: string): Promise<unknown[]> {
      socket.send(input);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: sentinel, method: "eth_chainId" }));
      for (;;) {
        const at = inbox.findIndex((m) => (m as { id?: unknown }).id === sentinel);
        if (at >= 0) return inbox.splice(0, at + 1).slice(0, -1);
        await new Promise<void>((resolve) => {
          arrived = resolve;
        });
      }
    }
    for (let i = 0; i < 150; i++) {
      const input = body(r);
      for (const answer of await answersTo(input, `sentinel-${i}`)) expectJsonRpcAnswer(answer, input);
      expect(socket.readyState, input).toBe(WebSocket.OPEN);
    }
    socket.close();
  });

  it("keeps serving afterwards: an operation still goes from send to receipt", async () => {
    expect((await fx.call("eth_chainId")).result).toBe(`0x${fx.devnet.chainId.toString(16)}`);
    const version = "0.7";
    const op = await fx.signedOperation(await fx.makeAccount(version));
    const { result: userOpHash } = await fx.call("eth_sendUserOperation", [op, fx.entryPoint(version)]);
    await fx.service.bundler.sendBundleNow();
    expect((await fx.call("eth_getUserOperationReceipt", [userOpHash])).result.success).toBe(true);
  });
});
