import { BusyError } from "../errors/errors.ts";
import { type Clock, systemClock } from "../ports/clock.ts";

/** Bounds the simulations (admissions and estimates) the engine runs at once. */
export interface SimulationGate {
  /**
   * Run `work` now if fewer than `maxConcurrent` are running; else wait in a queue of at most
   * `maxQueued`; else reject at once with `BusyError` (-32005) without running it. A `work` that
   * waits `maxWaitMs` without a slot leaves the queue and rejects with `BusyError` too. Once
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

  function release() {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }

  /** Wait for a slot; leave the queue when `signal` aborts or `maxWaitMs` passes first. */
  function queued(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = (reason: unknown) => {
        const at = waiting.indexOf(admitted);
        if (at >= 0) waiting.splice(at, 1);
        signal?.removeEventListener("abort", abandoned);
        reject(reason);
      };
      const abandoned = () => {
        deadline?.cancel();
        leave(signal?.reason);
      };
      const deadline =
        limits.maxWaitMs === undefined
          ? undefined
          : clock.setTimeout(
              () => leave(new BusyError(running, waiting.length - 1, limits.maxWaitMs)),
              limits.maxWaitMs,
            );
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
      else throw new BusyError(running, waiting.length);
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
