import type { ServerResponse } from "node:http";
import type { JsonRpcResponse } from "@bundlekit/core";

/** A JSON-RPC error answer that belongs to no request (`id: null`). */
export const rpcError = (code: number, message: string): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id: null,
  error: { code, message },
});

/** Write `body` as a JSON answer. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
  });
  response.end(json);
}
