import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { RpcErrorCode } from "@bundlekit/core";
import { createHttpEndpoint, type JsonRpcHttpOptions, type RequestBody } from "./http-endpoint.ts";
import { createInFlightLimit, type InFlightLimit } from "./in-flight-limit.ts";
import { type NodeRequest, requestBody } from "./request-body.ts";
import { rpcError, sendJson, writeAnswer } from "./respond.ts";

export type { JsonRpcHttpOptions } from "./http-endpoint.ts";

/**
 * Handles one HTTP request if it is for the JSON-RPC endpoint, the health probe or the metrics,
 * and resolves true; resolves false, touching nothing, for any other path so a host server can
 * route it. Paths are matched against `originalUrl` where a framework keeps it (Express strips
 * its mount path from `url`), so `basePath` is always the path clients use.
 */
export type JsonRpcRequestListener = (
  request: NodeRequest,
  response: ServerResponse,
) => Promise<boolean>;

/**
 * The in-flight limit of each connection, paused by stopping the socket. Node's HTTP server
 * resumes a socket when it reads a body; while the limit holds it, the socket is paused again
 * at once (Node pauses its own sockets the same way).
 */
function limitOf(
  socket: Socket,
  max: number,
  limits: WeakMap<Socket, InFlightLimit>,
): InFlightLimit {
  let limit = limits.get(socket);
  if (limit) return limit;
  let held = false;
  socket.on("resume", () => {
    if (held) socket.pause();
  });
  limit = createInFlightLimit(max, {
    pause() {
      held = true;
      socket.pause();
    },
    resume() {
      held = false;
      socket.resume();
    },
  });
  limits.set(socket, limit);
  return limit;
}

/** Resolves once the answer is sent (or its connection gone): until then it counts as in flight. */
const sent = (response: ServerResponse) =>
  new Promise<void>((resolve) => {
    if (response.writableFinished || response.destroyed) resolve();
    else response.once("close", resolve);
  });

/**
 * The listener, taking the body from the caller when a framework failed to read it (e.g.
 * `express.json()` on a body that is not JSON) instead of from the request.
 */
export function createNodeHttpHandler(options: JsonRpcHttpOptions) {
  const endpoint = createHttpEndpoint(options);
  const limits = new WeakMap<Socket, InFlightLimit>();

  const serve = async (
    request: NodeRequest,
    response: ServerResponse,
    given?: RequestBody,
  ): Promise<boolean> => {
    const url = request.originalUrl ?? request.url ?? "/";
    const { headers } = request;
    const screened = await endpoint.screen({ method: request.method ?? "GET", url, headers });
    if (screened === undefined) return false;
    if (!("call" in screened)) {
      writeAnswer(response, screened);
      return true;
    }
    const body =
      given ??
      (await requestBody(request, endpoint.maxBodyBytes).catch(() => ({
        overLimit: endpoint.maxBodyBytes,
      })));
    limitOf(request.socket, endpoint.maxInFlightRequests, limits).run(async () => {
      try {
        const answer = await endpoint.call(body, { url, headers }, screened.call);
        // A client that left too many answers unread is closed before it is sent another.
        if (request.socket.writableLength > endpoint.maxUnsentBytes) request.socket.destroy();
        else writeAnswer(response, answer);
      } catch {
        if (!response.headersSent)
          sendJson(response, 500, rpcError(RpcErrorCode.internalError, "internal error"));
      }
      await sent(response);
    });
    return true;
  };
  return Object.assign(serve, { paths: endpoint.paths });
}

/** The JSON-RPC endpoint as a Node request listener, to run alone or mount next to other routes. */
export function createJsonRpcRequestListener(options: JsonRpcHttpOptions): JsonRpcRequestListener {
  const serve = createNodeHttpHandler(options);
  return (request, response) => serve(request, response);
}
