import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { JsonRpcResponse } from "@bundlekit/core";
import type { HttpAnswer } from "./http-endpoint.ts";

/** A JSON-RPC error answer that belongs to no request (`id: null`). */
export const rpcError = (code: number, message: string): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id: null,
  error: { code, message },
});

/** A JSON answer. */
export function jsonAnswer(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpAnswer {
  return {
    status,
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  };
}

/** Write `answer` to a Node response. */
export function writeAnswer(response: ServerResponse, answer: HttpAnswer) {
  const headers =
    answer.body === undefined
      ? answer.headers
      : { ...answer.headers, "content-length": String(Buffer.byteLength(answer.body)) };
  response.writeHead(answer.status, headers).end(answer.body);
}

/** Write `body` as a JSON answer. */
export const sendJson = (
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => writeAnswer(response, jsonAnswer(status, body, headers));

const statusText: Record<number, string> = {
  403: "Forbidden",
  404: "Not Found",
  503: "Service Unavailable",
};

/** Answer an upgrade request that is not taken over with a JSON body, and close its socket. */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown) {
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${statusText[status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
  );
}
