import type { IncomingHttpHeaders } from "node:http";
import { InvalidParamsError, RpcErrorCode, type RpcRequestContext } from "@bundlekit/core";
import { type JsonRpcEndpointOptions, resolveEndpoint } from "./endpoint.ts";
import { rpcError } from "./respond.ts";
import { createStatusSubscriptions, type NewSubscription } from "./subscriptions.ts";

export interface JsonRpcWebSocketOptions extends JsonRpcEndpointOptions {
  /** Most `eth_subscribe` subscriptions one connection may hold. Default 100. */
  maxSubscriptions?: number;
  /**
   * Close a connection (code 1000) that has sent no request for this long and holds no
   * subscription; 0 never does. Default 300 000 (5 minutes).
   */
  webSocketIdleTimeoutMs?: number;
  /**
   * Ping every connection this often, and cut off one that has not answered the previous ping
   * (a peer gone without closing); 0 sends no pings. Default 30 000.
   */
  webSocketPingIntervalMs?: number;
}

/** The defaults of the WebSocket side's own limits. */
export const webSocketDefaults = {
  maxSubscriptions: 100,
  webSocketIdleTimeoutMs: 300_000,
  webSocketPingIntervalMs: 30_000,
} as const;

/** One client's connection: its messages in, its answers and notifications out through `send`. */
export interface JsonRpcConnection {
  /**
   * Answer one message (a request or a batch, as text): the answer goes to `send`, then the
   * subscriptions it made start, so a client never sees a notification before its subscription
   * id. Text that is not JSON gets a -32700 answer. Never rejects.
   */
  receive(message: string): Promise<void>;
  /** How many subscriptions the connection holds. */
  readonly subscriptions: number;
  /** End its subscriptions: the connection closed. */
  close(): void;
}

/**
 * The JSON-RPC endpoint for a message-framed transport such as WebSocket, apart from how
 * connections are accepted and messages framed: its path and limits, the checks of an upgrade,
 * and a connection per client. `createJsonRpcUpgradeHandler` runs it on `ws`; a host with a
 * WebSocket server of its own (e.g. Effect's `HttpServerRequest.upgrade`) runs it on that.
 */
export interface JsonRpcSocketEndpoint {
  /** The path, `/` the empty string. */
  basePath: string;
  /** Largest message accepted, in bytes: close a larger one's connection with code 1009. */
  maxBodyBytes: number;
  /** Messages of one connection answered at once; read no further while that many are in flight. */
  maxInFlightRequests: number;
  /** Bytes of answers a connection may leave unread before it is closed (code 1008). */
  maxUnsentBytes: number;
  /** Ping every connection this often, in ms (0: never); cut off one that did not answer the last ping. */
  pingIntervalMs: number;
  /** Close a connection idle this long, in ms, that holds no subscription (0: never). */
  idleTimeoutMs: number;
  /** Whether a request URL is the endpoint's path (query ignored, trailing `/` optional). */
  matches(url: string | undefined): boolean;
  /** Why an upgrade's Host or Origin is refused (status and message), or undefined when served. */
  refuse(headers: IncomingHttpHeaders): { status: number; message: string } | undefined;
  /** A new connection; `request` (the upgrade's URL and headers) goes with each of its requests. */
  connect(request: RpcRequestContext, send: (message: unknown) => void): JsonRpcConnection;
}

/**
 * JSON-RPC over a message-framed transport on the same path as HTTP: every method and batch the
 * HTTP endpoint serves, plus `eth_subscribe`/`eth_unsubscribe` for operation status changes.
 */
export function createJsonRpcSocketEndpoint(options: JsonRpcWebSocketOptions): JsonRpcSocketEndpoint {
  const endpoint = resolveEndpoint(options);
  const { metrics } = options;
  const maxSubscriptions = options.maxSubscriptions ?? webSocketDefaults.maxSubscriptions;

  function connect(request: RpcRequestContext, send: (message: unknown) => void): JsonRpcConnection {
    metrics?.connections.inc();
    const subscriptions = createStatusSubscriptions({
      source: options.bundler,
      notify: send,
      maxSubscriptions,
    });
    let closed = false;

    async function answer(message: string) {
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
        body = JSON.parse(message);
      } catch (error) {
        send(handler.parseError((error as Error).message));
        return;
      }
      const reply = await handler.handle(body, request);
      if (reply !== undefined) send(reply);
      for (const subscription of created) subscription.start();
    }

    return {
      receive: (message) =>
        answer(message).catch(() => send(rpcError(RpcErrorCode.internalError, "internal error"))),
      get subscriptions() {
        return subscriptions.size;
      },
      close() {
        if (closed) return;
        closed = true;
        metrics?.connections.dec();
        metrics?.subscriptions.dec(subscriptions.size);
        subscriptions.close();
      },
    };
  }

  return {
    basePath: endpoint.basePath,
    maxBodyBytes: endpoint.maxBodyBytes,
    maxInFlightRequests: endpoint.maxInFlightRequests,
    maxUnsentBytes: endpoint.maxUnsentBytes,
    pingIntervalMs: options.webSocketPingIntervalMs ?? webSocketDefaults.webSocketPingIntervalMs,
    idleTimeoutMs: options.webSocketIdleTimeoutMs ?? webSocketDefaults.webSocketIdleTimeoutMs,
    matches: endpoint.matches,
    refuse: endpoint.refuse,
    connect,
  };
}
