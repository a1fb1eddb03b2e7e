import { randomBytes } from "node:crypto";
import {
  encodePreconfirmation,
  InvalidParamsError,
  isAbsent,
  parseHash,
  parseObject,
  RpcError,
  RpcErrorCode,
  type StatusChange,
  type StatusListener,
} from "@bundlekit/core";
import { type Hex, toHex } from "viem";

/** Where status changes come from: a `Bundler`, or anything with its `onStatusChange`. */
export interface StatusSource {
  onStatusChange(listener: StatusListener): () => void;
}

/** The subscription kind `eth_subscribe` accepts: changes in user operations' status. */
export const userOperationStatusKind = "userOperationStatus";

/** A status change as a notification's `result` carries it: only JSON values, absent fields left out. */
export interface StatusNotificationResult {
  userOpHash: Hex;
  status: StatusChange["status"];
  transactionHash?: Hex;
  /** For `preconfirmed` and `preconfirmation_broken`: the promised block, as a quantity. */
  blockNumber?: Hex;
  /** For `preconfirmed` and `preconfirmation_broken`: the preconfirmation on the wire (docs/sequencer.md). */
  preconfirmation?: ReturnType<typeof encodePreconfirmation>;
  success?: boolean;
  reason?: string;
}

/** The message a subscriber receives for each matching change. */
export interface SubscriptionNotification {
  jsonrpc: "2.0";
  method: "eth_subscription";
  params: { subscription: Hex; result: StatusNotificationResult };
}

export interface StatusSubscriptionsOptions {
  source: StatusSource;
  /** Deliver one notification to the subscriber (e.g. write it to the WebSocket). */
  notify(notification: SubscriptionNotification): void;
  /** Most subscriptions held at once. Default 100. */
  maxSubscriptions?: number;
}

/** A new subscription: its id, and `start`, which releases notifications held until the id was delivered. */
export interface NewSubscription {
  id: Hex;
  start(): void;
}

/** The subscriptions of one connection. Transport-agnostic: anything that can push messages can host it. */
export interface StatusSubscriptions {
  /**
   * `eth_subscribe`'s work: parse `[kind, filter?]` and register a subscription. Changes are
   * captured from this moment but held until `start()`, so a client never sees a notification
   * before the subscription id. Throws `InvalidParamsError` for bad params.
   */
  subscribe(params: readonly unknown[]): NewSubscription;
  /** `eth_unsubscribe`'s work: true when the id named one of these subscriptions. */
  unsubscribe(id: unknown): boolean;
  /** How many subscriptions are held. */
  readonly size: number;
  /** End every subscription (the connection closed). */
  close(): void;
}

/** `{userOpHash}` of the filter as a set of lower-case hashes; undefined follows every operation. */
function parseFilter(value: unknown): ReadonlySet<string> | undefined {
  if (isAbsent(value)) return undefined;
  const filter = parseObject(value, "params[1]");
  for (const key of Object.keys(filter)) {
    if (key !== "userOpHash")
      throw new InvalidParamsError(
        `params[1].${key}`,
        "unknown filter field; the filter takes userOpHash",
      );
  }
  const hashes = filter.userOpHash;
  if (isAbsent(hashes)) return undefined;
  if (!Array.isArray(hashes)) return new Set([parseHash(hashes, "params[1].userOpHash")]);
  if (hashes.length === 0)
    throw new InvalidParamsError("params[1].userOpHash", "expected at least one hash");
  return new Set(hashes.map((hash, i) => parseHash(hash, `params[1].userOpHash[${i}]`)));
}

function toResult(change: StatusChange): StatusNotificationResult {
  const { userOpHash, status, transactionHash, blockNumber, success, reason, preconfirmation } = change;
  return {
    userOpHash,
    status,
    ...(transactionHash === undefined ? {} : { transactionHash }),
    ...(blockNumber === undefined ? {} : { blockNumber: toHex(blockNumber) }),
    ...(success === undefined ? {} : { success }),
    ...(reason === undefined ? {} : { reason }),
    ...(preconfirmation === undefined ? {} : { preconfirmation: encodePreconfirmation(preconfirmation) }),
  };
}

/**
 * Status subscriptions in the style of Ethereum clients' `eth_subscribe`: each one listens to the
 * source while it lives, filtered by operation hash, and stops listening when unsubscribed or
 * closed, so no listener outlives its connection.
 */
export function createStatusSubscriptions(
  options: StatusSubscriptionsOptions,
): StatusSubscriptions {
  const maxSubscriptions = options.maxSubscriptions ?? 100;
  const active = new Map<Hex, () => void>();
  let closed = false;

  return {
    subscribe(params) {
      if (closed) throw new RpcError(RpcErrorCode.invalidRequest, "the connection is closed");
      if (params[0] !== userOperationStatusKind) {
        const got =
          typeof params[0] === "string" ? `"${params[0].slice(0, 40)}"` : String(params[0]);
        throw new InvalidParamsError(
          "params[0]",
          `unknown subscription kind ${got}; supported: ${userOperationStatusKind}`,
        );
      }
      if (params.length > 2)
        throw new InvalidParamsError("params", `expected 1 or 2 parameters, got ${params.length}`);
      const hashes = parseFilter(params[1]);
      if (active.size >= maxSubscriptions) {
        throw new RpcError(
          RpcErrorCode.invalidRequest,
          `too many subscriptions on this connection (limit ${maxSubscriptions}); unsubscribe first`,
          {
            limit: maxSubscriptions,
          },
        );
      }
      const id = `0x${randomBytes(16).toString("hex")}` as Hex;
      let held: StatusChange[] | undefined = [];
      const deliver = (change: StatusChange) =>
        options.notify({
          jsonrpc: "2.0",
          method: "eth_subscription",
          params: { subscription: id, result: toResult(change) },
        });
      const stop = options.source.onStatusChange((change) => {
        if (hashes && !hashes.has(change.userOpHash.toLowerCase())) return;
        if (held) held.push(change);
        else deliver(change);
      });
      active.set(id, stop);
      return {
        id,
        start() {
          const backlog = held ?? [];
          held = undefined;
          if (active.has(id)) for (const change of backlog) deliver(change);
        },
      };
    },

    unsubscribe(id) {
      const key = typeof id === "string" ? (id.toLowerCase() as Hex) : undefined;
      const stop = key && active.get(key);
      if (!stop) return false;
      stop();
      active.delete(key);
      return true;
    },

    get size() {
      return active.size;
    },

    close() {
      closed = true;
      for (const stop of active.values()) stop();
      active.clear();
    },
  };
}
