/** A request sent again, as a wallet does, while the service answers that it is busy (-32005). */
import { BaseError } from "viem";

/** When the service gives no Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * How long a busy refusal asks the caller to wait, in ms: its HTTP `Retry-After` (seconds) when
 * it has one, else 1 s; undefined when `error` is no busy refusal.
 */
export function busyRetryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const busy = error.walk((e) => (e as { code?: unknown }).code === -32005);
  if (!busy) return undefined;
  const answer = error.walk((e) => (e as { headers?: unknown }).headers instanceof Headers) as {
    headers?: Headers;
  } | null;
  const seconds = Number(answer?.headers?.get("retry-after") ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS;
}

/**
 * `request()` until it is answered otherwise than busy, waiting each refusal's Retry-After;
 * `refused(ms)` learns how long each refusal took to come back. Without `retry`, once.
 */
export async function retryingBusy<T>(
  request: () => Promise<T>,
  retry: boolean,
  refused: (ms: number) => void,
): Promise<T> {
  for (;;) {
    const start = performance.now();
    try {
      return await request();
    } catch (error) {
      const waitMs = busyRetryAfterMs(error);
      if (waitMs === undefined) throw error;
      refused(performance.now() - start);
      if (!retry) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
