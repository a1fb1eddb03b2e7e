import { ShuttingDownError } from "../errors/errors.ts";
import { type Clock, sleep, systemClock } from "../ports/clock.ts";

/**
 * The requests a JSON-RPC handler is running, so a service can stop within a grace period: pass
 * it to `createRpcHandler({ drain })`, and call `drain` on shutdown.
 */
export interface RequestDrain {
  /** Run one request's method, counted as in flight; once draining, fails at once with `ShuttingDownError`. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Requests running now. */
  readonly inFlight: number;
  /**
   * Take no more requests (each new one fails with `ShuttingDownError`) and wait for those in
   * flight, for at most `graceMs`; then those still running answer `ShuttingDownError` at once
   * (their work is abandoned, not awaited). Resolves when no request is left in flight.
   */
  drain(graceMs: number): Promise<void>;
}

/** A `RequestDrain` timed on `clock` (default: the wall clock). */
export function createRequestDrain(clock: Clock = systemClock): RequestDrain {
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  let drained: Promise<void> | undefined;
  let abandon: (error: ShuttingDownError) => void = () => {};
  const abandoned = new Promise<never>((_, reject) => {
    abandon = reject;
  });
  abandoned.catch(() => {});

  return {
    get inFlight() {
      return inFlight;
    },
    async run(work) {
      if (draining) throw new ShuttingDownError();
      inFlight++;
      try {
        return await Promise.race([work(), abandoned]);
      } finally {
        inFlight--;
        if (inFlight === 0) idle?.();
      }
    },
    drain(graceMs) {
      draining = true;
      drained ??= (async () => {
        if (inFlight === 0) return;
        const settled = new Promise<void>((resolve) => {
          idle = resolve;
        });
        await Promise.race([settled, sleep(clock, graceMs)]);
        abandon(new ShuttingDownError());
        await settled;
      })();
      return drained;
    },
  };
}
