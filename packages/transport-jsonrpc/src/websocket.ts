import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { InvalidParamsError, RpcErrorCode } from "@bundlekit/core";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { type JsonRpcEndpointOptions, resolveEndpoint } from "./endpoint.ts";
import { rpcError } from "./respond.ts";
import { createStatusSubscriptions, type NewSubscription } from "./subscriptions.ts";

export interface JsonRpcWebSocketOptions extends JsonRpcEndpointOptions {
  /** Most `eth_subscribe` subscriptions one connection may hold. Default 100. */
  maxSubscriptions?: number;
}

/**
 * Takes over an HTTP upgrade request for the JSON-RPC path and returns true; returns false,
 * touching nothing, for any other path so a host server can route it (or refuse it).
 */
export interface JsonRpcUpgradeHandler {
  (request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Close every connection (code 1001) and end its subscriptions. */
  close(): Promise<void>;
}

/** A client that leaves more than this many bytes unread is disconnected (code 1008) rather than let memory grow. */
const maxBufferedBytes = 16 * 1024 * 1024;

/** How long `close` waits for clients to acknowledge before cutting them off. */
const closeGraceMs = 1_000;

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
  const endpoint = resolveEndpoint(options);
  const { metrics } = options;
  // Invalid UTF-8 reaches the parser (and is answered -32700) instead of closing the connection.
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: endpoint.maxBodyBytes,
    skipUTF8Validation: true,
  });
  server.on("connection", serve);

  /** One connection; `upgrade` (its URL and headers) goes with every request it sends. */
  function serve(socket: WebSocket, upgrade: IncomingMessage) {
    metrics?.connections.inc();
    const send = (message: unknown) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      if (socket.bufferedAmount > maxBufferedBytes) {
        socket.close(1008, "too many unread messages");
        return;
      }
      socket.send(JSON.stringify(message));
    };
    const subscriptions = createStatusSubscriptions({
      source: options.bundler,
      notify: send,
      maxSubscriptions: options.maxSubscriptions,
    });

    async function answer(data: RawData) {
      // Subscriptions made by this message start once its answer (holding their ids) is sent.
      const created: NewSubscription[] = [];
      const handler = endpoint.handler("ws", {
        async eth_subscribe(params) {
          const subscription = subscriptions.subscribe(params);
          created.push(subscription);
          metrics?.subscriptions.inc();
          return subscription.id;
        },
        async eth_unsubscribe(params) {
          if (params.length !== 1)
            throw new InvalidParamsError(
              "params",
              `expected 1 parameter (the subscription id), got ${params.length}`,
            );
          if (typeof params[0] !== "string")
            throw new InvalidParamsError("params[0]", "expected the subscription id string");
          const removed = subscriptions.unsubscribe(params[0]);
          if (removed) metrics?.subscriptions.dec();
          return removed;
        },
      });
      let body: unknown;
      try {
        body = JSON.parse(toText(data));
      } catch (error) {
        send(handler.parseError((error as Error).message));
        return;
      }
      const reply = await handler.handle(body, { url: upgrade.url, headers: upgrade.headers });
      if (reply !== undefined) send(reply);
      for (const subscription of created) subscription.start();
    }

    socket.on("message", (data) => {
      answer(data).catch(() => send(rpcError(RpcErrorCode.internalError, "internal error")));
    });
    // ws reports protocol faults (e.g. a message over maxPayload) here and closes the socket itself.
    socket.on("error", () => {});
    socket.once("close", () => {
      metrics?.connections.dec();
      metrics?.subscriptions.dec(subscriptions.size);
      subscriptions.close();
    });
  }

  const handleUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!endpoint.matches(request.url)) return false;
    server.handleUpgrade(request, socket, head, (ws) => server.emit("connection", ws, request));
    return true;
  };

  return Object.assign(handleUpgrade, {
    async close() {
      const open = [...server.clients];
      await Promise.all(
        open.map(
          (client) =>
            new Promise<void>((resolve) => {
              if (client.readyState === WebSocket.CLOSED) return resolve();
              const cutOff = setTimeout(() => client.terminate(), closeGraceMs);
              client.once("close", () => {
                clearTimeout(cutOff);
                resolve();
              });
              client.close(1001, "server shutting down");
            }),
        ),
      );
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
