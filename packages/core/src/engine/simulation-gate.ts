import { BusyError } from "../errors/errors.ts";

/** Bounds the simulations (admissions and estimates) the engine runs at once. */
export interface SimulationGate {
  /**
   * Run `work` now if fewer than `maxConcurrent` are running; else wait in a queue of at most
   * `maxQueued`; else reject at once with `BusyError` (-32005) without running it. Once `signal`
   * aborts, a waiting `work` leaves the queue (its place goes to the next) and rejects with the
   * signal's reason without running.
   */
  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/**
 * A gate of `maxConcurrent` slots and a first-come wait queue of `maxQueued`. Each simulation holds
 * its node calls, traces and decoded state in memory until it ends, so the cap bounds both the
 * memory and the node load that a flood of requests can cause; past the queue, callers learn at
 * once that the bundler is busy instead of waiting behind thousands of others.
 */
export function createSimulationGate(limits: {
  maxConcurrent: number;
  maxQueued: number;
}): SimulationGate {
  let running = 0;
  const waiting: (() => void)[] = [];

  function release() {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }

  /** Wait for a slot; leave the queue when `signal` aborts first. */
  function queued(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const admitted = () => {
        signal?.removeEventListener("abort", abandoned);
        resolve();
      };
      const abandoned = () => {
        const at = waiting.indexOf(admitted);
        if (at >= 0) waiting.splice(at, 1);
        reject(signal?.reason);
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
