import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/** The JSON-RPC 2.0 envelope of the stand-alone service: ids, batches and request errors. */

let fx: ServiceFixture;
const maxBatchSize = 5;
beforeAll(async () => {
  fx = await serviceFixture({ maxBatchSize, maxBodyBytes: 64 * 1024 });
});
afterAll(() => fx?.close());

describe("requests", () => {
  it("takes a body with only id and method, as the spec sends bundler_getGasPrice", async () => {
    const { status, body } = await fx.post(JSON.stringify({ id: 7, method: "eth_chainId" }));
    expect(status).toBe(200);
    expect(body).toEqual({ jsonrpc: "2.0", id: 7, result: `0x${fx.devnet.chainId.toString(16)}` });
  });

  it.each([0, "abc", null, 2 ** 40])("echoes the id %j", async (id) => {
    const { body } = await fx.post(JSON.stringify({ jsonrpc: "2.0", id, method: "eth_chainId" }));
    expect(body.id).toEqual(id);
  });

  it("treats null params as none", async () => {
    const { body } = await fx.post(JSON.stringify({ id: 1, method: "eth_supportedEntryPoints", params: null }));
    expect(body.result).toHaveLength(4);
  });

  it.each([
    ["a served method", "eth_chainId"],
    ["an unknown method (not even an error)", "no_such_method"],
  ])("answers a notification (no id) to %s with nothing", async (_what, method) => {
    const response = await fetch(fx.service.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", method }) });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
  });

  it.each<[string, unknown, RegExp]>([
    ["a string", "eth_chainId", /request object/],
    ["a number", 42, /request object/],
    ["a method that is not a string", { id: 1, method: 7 }, /method must be a string/],
    ["no method", { id: 1 }, /method must be a string/],
    ["jsonrpc 1.0", { jsonrpc: "1.0", id: 1, method: "eth_chainId" }, /jsonrpc must be "2.0"/],
    ["an object id", { id: { a: 1 }, method: "eth_chainId" }, /id must be/],
    ["params as an object", { id: 1, method: "eth_chainId", params: { a: 1 } }, /params must be an array/],
  ])("refuses %s with -32600 or -32602", async (_what, request, message) => {
    const { status, body } = await fx.post(JSON.stringify(request));
    expect(status).toBe(200);
    expect([-32600, -32602]).toContain(body.error.code);
    expect(body.error.message).toMatch(message);
  });

  it.each(["eth_sendTransaction", "debug_bundler_clearState", "constructor", "__proto__", "toString"])("answers -32601 for %s", async (method) => {
    const { body } = await fx.post(JSON.stringify({ id: 1, method }));
    expect(body).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: `method ${method} is not supported` } });
  });

  it("answers malformed JSON with -32700", async () => {
    const { status, contentType, body } = await fx.post('{"id":1,"method":');
    expect(status).toBe(200);
    expect(contentType).toMatch(/application\/json/);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("answers a body over the limit with a JSON-RPC error naming the limit", async () => {
    const { status, contentType, body } = await fx.post(JSON.stringify({ id: 1, method: "eth_chainId", params: ["x".repeat(70 * 1024)] }));
    expect(status).toBe(413);
    expect(contentType).toMatch(/application\/json/);
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/exceeds the limit of 65536 bytes/);
  });
});

describe("batches", () => {
  it("answers each request of a batch, one bad item failing alone", async () => {
    const { body } = await fx.post(
      JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
        { jsonrpc: "2.0", id: 2, method: "no_such_method" },
        { jsonrpc: "2.0", id: 3, method: "eth_getUserOperationByHash", params: ["0x12"] },
        "garbage",
        { jsonrpc: "2.0", method: "eth_chainId" },
      ]),
    );
    expect(body).toHaveLength(4); // the notification gets no answer
    expect(body[0]).toMatchObject({ id: 1, result: expect.any(String) });
    expect(body[1]).toMatchObject({ id: 2, error: { code: -32601 } });
    expect(body[2]).toMatchObject({ id: 3, error: { code: -32602 } });
    expect(body[3]).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("refuses an empty batch and one over the configured size", async () => {
    expect((await fx.post("[]")).body).toMatchObject({ id: null, error: { code: -32600, message: expect.stringMatching(/empty batch/) } });
    const tooMany = Array.from({ length: maxBatchSize + 1 }, (_, i) => ({ id: i, method: "eth_chainId" }));
    expect((await fx.post(JSON.stringify(tooMany))).body).toMatchObject({
      error: { code: -32600, message: `invalid request: batch of ${maxBatchSize + 1} exceeds the limit of ${maxBatchSize}` },
    });
  });
});
