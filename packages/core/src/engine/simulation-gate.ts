import { BusyError } from "../errors/errors.ts";
import { type Clock, systemClock } from "../ports/clock.ts";

/** Bounds the simulations (admissions and estimates) the engine runs at once. */
export interface SimulationGate {
  /**
   * Run `work` now if fewer than `maxConcurrent` are running; else wait in a queue of at most
   * `maxQueued`; else reject at once with `BusyError` (-32005) without running it. A `work` that
   * waits `maxWaitMs` without a slot leaves the queue and rejects with `BusyError` too. A
   * `BusyError` advises a retry after about the time the queue takes to drain at the pace of the
   * recent simulations (1 to 60 s), so that refused callers come back as slots free, not all at
   * once every second. Once
   * `signal` aborts, a waiting `work` leaves the queue (its place goes to the next) and rejects
   * with the signal's reason without running.
   */
  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/**
 * A gate of `maxConcurrent` slots and a first-come wait queue of `maxQueued`, none waiting longer
 * than `maxWaitMs`. Each simulation holds its node calls, traces and decoded state in memory until
 * it ends, so the cap bounds both the memory and the node load that a flood of requests can
 * cause; past the queue, callers learn at once that the bundler is busy instead of waiting behind
 * thousands of others. The wait bound is in time because a queue's length says nothing of how
 * long it takes to drain (a slow or hung node, a shared machine): a caller is answered busy well
 * before its own timeout (viem's is 10 s) rather than left to give up on a request still queued.
 */
export function createSimulationGate(limits: {
  maxConcurrent: number;
  maxQueued: number;
  maxWaitMs?: number;
  clock?: Clock;
}): SimulationGate {
  const clock = limits.clock ?? systemClock;
  let running = 0;
  const waiting: (() => void)[] = [];
  /** Recent simulations' mean duration (exponentially weighted), undefined before the first ends. */
  let meanMs: number | undefined;

  /** Seconds for what runs and waits now to drain at the recent pace: 1 to 60. */
  function retryAfterSeconds(): number {
    const drainMs = ((running + waiting.length) * (meanMs ?? 0)) / limits.maxConcurrent;
    return Math.min(60, Math.max(1, Math.ceil(drainMs / 1000)));
  }
  const busy = (waitedMs?: number) =>
    new BusyError(running, waiting.length, { waitedMs, retryAfterSeconds: retryAfterSeconds() });

  function release() {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }

  /** Wait for a slot; leave the queue when `signal` aborts or `maxWaitMs` passes first. */
  function queued(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = (reason: () => unknown) => {
        const at = waiting.indexOf(admitted);
        if (at >= 0) waiting.splice(at, 1);
        signal?.removeEventListener("abort", abandoned);
        reject(reason());
      };
      const abandoned = () => {
        deadline?.cancel();
        leave(() => signal?.reason);
      };
      const deadline =
        limits.maxWaitMs === undefined
          ? undefined
          : clock.setTimeout(() => leave(() => busy(limits.maxWaitMs)), limits.maxWaitMs);
      const admitted = () => {
        deadline?.cancel();
        signal?.removeEventListener("abort", abandoned);
        resolve();
      };
      waiting.push(admitted);
      signal?.addEventListener("abort", abandoned, { once: true });
    });
  }

  return {
    async run(work, signal) {
      signal?.throwIfAborted();
      if (running < limits.maxConcurrent) running++;
      else if (waiting.length < limits.maxQueued) await queued(signal);
      else throw busy();
      const started = clock.now();
      try {
        return await work();
      } finally {
        const tookMs = clock.now() - started;
        meanMs = meanMs === undefined ? tookMs : 0.8 * meanMs + 0.2 * tookMs;
        release();
      }
    },
  };
}
