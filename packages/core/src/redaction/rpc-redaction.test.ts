import { describe, expect, it } from "vitest";
import type { Bundler } from "../engine/create-bundler.ts";
import { InfrastructureError, InvalidParamsError } from "../errors/errors.ts";
import { createRpcHandler } from "../rpc/handle-request.ts";
import { createRedactor } from "./redactor.ts";

const NODE = "https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef";
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/** A handler whose methods fail with a node URL and a key in what they throw, and the lines it logs. */
function failingHandler() {
  const lines: unknown[] = [];
  const record = (message: string, fields?: Record<string, unknown>) =>
    lines.push({ message, ...fields });
  const handler = createRpcHandler({} as Bundler, {
    logger: { debug: record, info: record, warn: record, error: record },
    redactor: createRedactor([KEY]),
    methods: {
      infrastructure: async () => {
        throw new InfrastructureError(
          `handleOps estimation failed without revert data: request to ${NODE} failed with ${KEY}`,
        );
      },
      params: async () => {
        throw new InvalidParamsError("params[0]", `cannot use ${NODE}`);
      },
      crash: async () => {
        throw new Error(`HTTP request failed.\nURL: ${NODE}\nkey ${BigInt(KEY)}`);
      },
    },
  });
  return { handler, lines };
}

describe("JSON-RPC error answers", () => {
  it("-32603 from an infrastructure failure carries no node URL or key in its message", async () => {
    const { handler } = failingHandler();
    expect(await handler.handle({ jsonrpc: "2.0", id: 1, method: "infrastructure" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32603,
        message:
          "handleOps estimation failed without revert data: request to https://mainnet.infura.io/… failed with 0x[redacted]",
      },
    });
  });

  it("-32602 carries no node URL in its message or data", async () => {
    const { handler } = failingHandler();
    const answer = JSON.stringify(
      await handler.handle({ jsonrpc: "2.0", id: 1, method: "params" }),
    );
    expect(answer).toContain('"code":-32602');
    expect(answer).toContain("https://mainnet.infura.io/…");
    expect(answer).not.toContain("0123456789abcdef");
  });

  it("an unexpected error answers a bare -32603 and is logged without the URL or the key", async () => {
    const { handler, lines } = failingHandler();
    expect(await handler.handle({ jsonrpc: "2.0", id: 1, method: "crash" })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32603, message: "internal error" },
    });
    expect(lines).toEqual([
      {
        message: "internal error",
        method: "crash",
        error: "Error: HTTP request failed.\nURL: https://mainnet.infura.io/…\nkey [redacted]",
      },
    ]);
  });
});
