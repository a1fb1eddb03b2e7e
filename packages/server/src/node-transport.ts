import { http, type Transport, webSocket } from "viem";

/** How long the service waits for its node, and how often it asks again. */
export interface NodeTimeouts {
  /** Milliseconds one request to the node may take before it counts as failed. */
  timeoutMs: number;
  /** Further attempts after a failed (or timed-out) request. */
  retryCount: number;
  /**
   * Most JSON-RPC requests joined into one HTTP request (those made in the same turn of the
   * event loop); 1 sends each alone. Over HTTP only.
   */
  batchSize?: number | undefined;
}

/**
 * viem's transport for `url` (http(s) or ws(s)) with the service's node timeouts, for every
 * client the service makes: a node that hangs costs a request at most
 * `(retryCount + 1) × timeoutMs` plus viem's back-off, instead of viem's default of four 10 s
 * attempts. With `batchSize`, requests made together share one HTTP request: under load that is
 * fewer requests for the node (and for the service) to parse and answer.
 */
export function nodeTransport(url: string, { timeoutMs, retryCount, batchSize = 1 }: NodeTimeouts): Transport {
  const options = { timeout: timeoutMs, retryCount };
  if (url.startsWith("ws")) return webSocket(url, options);
  return http(url, batchSize > 1 ? { ...options, batch: { batchSize, wait: 0 } } : options);
}
