import type { ChainClient } from "../ports/chain-client.ts";

/** What the engine's cancellable calls take: `signal` aborts the call. */
export interface AbortOptions {
  /** Abort the call: it stops at its next node request, or leaves the simulation queue. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * `client` for work that `signal` may abandon: once it aborts, each further request throws the
 * signal's reason instead of reaching the node (a request already sent runs to its end; viem's
 * actions take no per-call signal).
 */
export function abortableClient(client: ChainClient, signal: AbortSignal | undefined): ChainClient {
  if (!signal) return client;
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        signal.throwIfAborted();
        return Reflect.apply(value, target, args);
      };
    },
  });
}

/** `context` with its chain client abortable by `signal`. */
export function withSignal<C extends { client: ChainClient }>(context: C, signal: AbortSignal | undefined): C {
  return signal ? { ...context, client: abortableClient(context.client, signal) } : context;
}
