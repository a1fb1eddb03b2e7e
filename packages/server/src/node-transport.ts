import { http, type Transport, webSocket } from "viem";

/** How long the service waits for its node, and how often it asks again. */
export interface NodeTimeouts {
  /** Milliseconds one request to the node may take before it counts as failed. */
  timeoutMs: number;
  /** Further attempts after a failed (or timed-out) request. */
  retryCount: number;
}

/**
 * viem's transport for `url` (http(s) or ws(s)) with the service's node timeouts, for every
 * client the service makes: a node that hangs costs a request at most
 * `(retryCount + 1) × timeoutMs` plus viem's back-off, instead of viem's default of four 10 s
 * attempts.
 */
export function nodeTransport(url: string, { timeoutMs, retryCount }: NodeTimeouts): Transport {
  const options = { timeout: timeoutMs, retryCount };
  return url.startsWith("ws") ? webSocket(url, options) : http(url, options);
}
