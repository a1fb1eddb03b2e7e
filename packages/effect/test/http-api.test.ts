import type { Bundler as Engine } from "@bundlekit/core";
import { Layer } from "effect";
import { HttpRouter, HttpServer } from "effect/http";
import { HttpApiBuilder } from "effect/http-api";
import { describe, expect, it } from "vitest";
import { Bundler } from "../src/bundler.ts";
import { BundlerApi, BundlerApiHandlers } from "../src/http-api.ts";
import { examples, hash } from "./domain-errors.ts";

/** An engine whose every method rejects with `error`, and that serves chain 31337. */
const failingEngine = (error: unknown): Engine =>
  new Proxy({ chainId: 31337 } as Engine, {
    get: (target, key) => (key === "chainId" ? target.chainId : () => Promise.reject(error)),
  });

/** POST `body` to `/<method>` of the `HttpApi` group over an engine failing with `error`. */
async function call(method: string, body: unknown, error: unknown = new Error("unused")) {
  const api = HttpApiBuilder.layer(BundlerApi).pipe(
    Layer.provide(BundlerApiHandlers),
    Layer.provide(Layer.succeed(Bundler, Bundler.make(failingEngine(error)))),
    Layer.provide(HttpServer.layerServices),
  );
  const { handler, dispose } = HttpRouter.toWebHandler(api, { disableLogger: true });
  try {
    const response = await handler(new Request(`http://localhost/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
    return { status: response.status, body: await response.json() };
  } finally {
    await dispose();
  }
}

const lookup = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_getUserOperationReceipt", params: [hash] });

describe("BundlerApiGroup: errors as JSON-RPC error answers", () => {
  it("answers a body the schemas refuse with -32602 naming the field, -32600 for the envelope", async () => {
    expect(await call("eth_getUserOperationReceipt", { ...lookup(1), params: ["0x12"] })).toEqual({
      status: 400,
      body: { jsonrpc: "2.0", id: null, error: { code: -32602, message: expect.stringMatching(/^params\[0\]: invalid hash/) } },
    });
    const noVersion = await call("eth_getUserOperationReceipt", { id: 1, method: "eth_getUserOperationReceipt", params: [hash] });
    expect(noVersion.body).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining("jsonrpc") } });
  });

  it("answers an engine refusal with its ERC-7769 code, message and data and the request's id; busy 429, the node's failure 500", async () => {
    const failed = await call("eth_getUserOperationByHash", { ...lookup(5), method: "eth_getUserOperationByHash" }, examples.infrastructure);
    expect(failed).toEqual({ status: 500, body: { jsonrpc: "2.0", id: 5, error: { code: -32603, message: examples.infrastructure.message } } });
    const estimate = {
      jsonrpc: "2.0",
      id: 7,
      method: "eth_estimateUserOperationGas",
      params: [{ sender: "0x00000000000000000000000000000000000000Aa", nonce: "0x0", callData: "0x" }, "0x0000000071727De22E5E9d8BAf0edAc6f37da032"],
    };
    expect(await call("eth_estimateUserOperationGas", estimate, examples.busy)).toMatchObject({ status: 429, body: { id: 7, error: { code: -32005 } } });
    expect(await call("eth_estimateUserOperationGas", estimate, examples.executionReverted)).toMatchObject({
      status: 400,
      body: { id: 7, error: { code: -32521, message: examples.executionReverted.message } },
    });
  });
});
