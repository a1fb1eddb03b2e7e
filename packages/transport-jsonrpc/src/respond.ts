import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { type JsonRpcResponse, RpcErrorCode } from "@bundlekit/core";
import type { HttpAnswer } from "./http-endpoint.ts";

/** A JSON-RPC error answer that belongs to no request (`id: null`). */
export const rpcError = (code: number, message: string): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id: null,
  error: { code, message },
});

/**
 * How HTTP says "busy, retry in a moment" (-32005): status 429 with `Retry-After` in seconds.
 * 429 rather than 503 because the clients that retry by themselves retry it after `Retry-After`
 * (viem retries 429 and 503, ethers 429 and not 503), and because proxies count a 503 as a
 * failing backend (Envoy's outlier detection ejects it, nginx's `max_fails` may), which moves the
 * load onto the other instances and overloads them in turn; gRPC's RESOURCE_EXHAUSTED maps to 429.
 */
export const busyStatus = 429;

/**
 * The headers of a busy answer: `Retry-After` (default 1 s), readable by a page of an allowed
 * origin too (it is not a CORS-safelisted header).
 */
export function busyHeaders(
  cors: Record<string, string>,
  retryAfterSeconds = 1,
): Record<string, string> {
  const retryAfter = { "retry-after": String(retryAfterSeconds) };
  return "access-control-allow-origin" in cors
    ? { ...cors, ...retryAfter, "access-control-expose-headers": "retry-after" }
    : { ...cors, ...retryAfter };
}

/**
 * When every answer of `reply` (one, or a batch's) is busy (-32005), so the whole of it may be
 * sent again: the longest `Retry-After` they advise (`data.retryAfter`, seconds; else 1).
 * Undefined when some answer is not busy.
 */
export function busyRetryAfter(reply: JsonRpcResponse | JsonRpcResponse[]): number | undefined {
  const answers = Array.isArray(reply) ? reply : [reply];
  let seconds = 0;
  for (const answer of answers) {
    if (!("error" in answer) || answer.error.code !== RpcErrorCode.limitExceeded) return undefined;
    const advised = (answer.error.data as { retryAfter?: unknown } | undefined)?.retryAfter;
    seconds = Math.max(seconds, typeof advised === "number" ? advised : 1);
  }
  return answers.length > 0 ? seconds : undefined;
}

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
  429: "Too Many Requests",
  503: "Service Unavailable",
};

/** Answer an upgrade request that is not taken over with a JSON body, and close its socket. */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown) {
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${statusText[status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
  );
}
