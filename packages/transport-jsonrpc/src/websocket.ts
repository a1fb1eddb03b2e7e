import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { RpcErrorCode } from "@bundlekit/core";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { createInFlightLimit } from "./in-flight-limit.ts";
import { refuseUpgrade, rpcError } from "./respond.ts";
import { createJsonRpcSocketEndpoint, type JsonRpcWebSocketOptions } from "./socket-endpoint.ts";

/**
 * Takes over an HTTP upgrade request for the JSON-RPC path and returns true; returns false,
 * touching nothing, for any other path so a host server can route it (or refuse it).
 */
export interface JsonRpcUpgradeHandler {
  (request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Close every connection (code 1001) and end its subscriptions. */
  close(): Promise<void>;
  /**
   * Take the upgrades of `server` (e.g. what `app.listen()` returned) for the endpoint's path;
   * answer any other path 404, unless another `upgrade` listener of the server is there for it.
   */
  attach(server: Server): void;
}

/** How long a closing connection waits for the client to acknowledge before it is cut off. */
const closeGraceMs = 1_000;

/** Close with `code`, and cut the connection off if the client does not acknowledge in time (it may not be reading). */
function closeOrCut(client: WebSocket, code: number, reason: string): Promise<void> {
  return new Promise<void>((resolve) => {
    if (client.readyState === WebSocket.CLOSED) return resolve();
    const cutOff = setTimeout(() => client.terminate(), closeGraceMs);
    client.once("close", () => {
      clearTimeout(cutOff);
      resolve();
    });
    client.close(code, reason);
  });
}

/**
 * Ping the client every `pingMs` and cut it off when it has not answered the previous ping;
 * close it after `idleMs` without a message unless `busy()` (it waits for answers or
 * notifications). Timers end with the connection.
 */
function watchLiveness(socket: WebSocket, pingMs: number, idleMs: number, busy: () => boolean) {
  const timers: NodeJS.Timeout[] = [];
  if (pingMs > 0) {
    let answered = true;
    socket.on("pong", () => {
      answered = true;
    });
    timers.push(
      setInterval(() => {
        if (!answered) return socket.terminate();
        answered = false;
        socket.ping();
      }, pingMs),
    );
  }
  if (idleMs > 0) {
    const idle = setTimeout(() => {
      if (busy()) idle.refresh();
      else void closeOrCut(socket, 1000, `idle for ${idleMs} ms`);
    }, idleMs);
    socket.on("message", () => idle.refresh());
    timers.push(idle);
  }
  socket.once("close", () => {
    for (const timer of timers) clearTimeout(timer);
  });
}

function toText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString("utf8");
}

/**
 * JSON-RPC over WebSocket on the same path as HTTP: every method and batch the HTTP endpoint
 * serves, plus `eth_subscribe`/`eth_unsubscribe` for operation status changes. Messages are
 * limited to `maxBodyBytes` (a larger one closes the connection with code 1009); a message that
 * is not JSON is answered with a -32700 error and the connection stays open.
 */
export function createJsonRpcUpgradeHandler(
  options: JsonRpcWebSocketOptions,
): JsonRpcUpgradeHandler {
  const endpoint = createJsonRpcSocketEndpoint(options);
  const { maxUnsentBytes, maxInFlightRequests, pingIntervalMs, idleTimeoutMs } = endpoint;
  // Invalid UTF-8 reaches the parser (and is answered -32700) instead of closing the connection.
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: endpoint.maxBodyBytes,
    skipUTF8Validation: true,
  });
  server.on("connection", serve);

  /** One connection; `upgrade` (its URL and headers) goes with every request it sends. */
  function serve(socket: WebSocket, upgrade: IncomingMessage) {
    const send = (message: unknown) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      if (socket.bufferedAmount > maxUnsentBytes) {
        void closeOrCut(socket, 1008, `more than ${maxUnsentBytes} bytes of answers left unread`);
        return;
      }
      socket.send(JSON.stringify(message));
    };
    const connection = endpoint.connect({ url: upgrade.url, headers: upgrade.headers }, send);

    let inFlight = 0;
    const limit = createInFlightLimit(maxInFlightRequests, socket);
    socket.on("message", (data) => {
      inFlight++;
      limit.run(() => connection.receive(toText(data)).finally(() => inFlight--));
    });
    watchLiveness(socket, pingIntervalMs, idleTimeoutMs, () => inFlight > 0 || connection.subscriptions > 0);
    // ws reports protocol faults (e.g. a message over maxPayload) here and closes the socket itself.
    socket.on("error", () => {});
    socket.once("close", () => connection.close());
  }

  const handleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!endpoint.matches(request.url)) return false;
    const refusal = endpoint.refuse(request.headers);
    if (refusal) {
      refuseUpgrade(socket, refusal.status, rpcError(RpcErrorCode.invalidRequest, refusal.message));
      return true;
    }
    server.handleUpgrade(request, socket, head, (ws) => server.emit("connection", ws, request));
    return true;
  };

  return Object.assign(handleUpgrade, {
    attach(host: Server) {
      host.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        if (handleUpgrade(request, socket, head) || host.listenerCount("upgrade") > 1) return;
        refuseUpgrade(
          socket,
          404,
          rpcError(
            RpcErrorCode.invalidRequest,
            `no WebSocket endpoint here; connect to ${endpoint.basePath || "/"}`,
          ),
        );
      });
    },
    async close() {
      await Promise.all(
        [...server.clients].map((client) => closeOrCut(client, 1001, "server shutting down")),
      );
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
