import { BusyError } from "../errors/errors.ts";

/** Bounds the simulations (admissions and estimates) the engine runs at once. */
export interface SimulationGate {
  /**
   * Run `work` now if fewer than `maxConcurrent` are running; else wait in a queue of at most
   * `maxQueued`; else reject at once with `BusyError` (-32005) without running it.
   */
  run<T>(work: () => Promise<T>): Promise<T>;
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

  return {
    async run(work) {
      if (running < limits.maxConcurrent) running++;
      else if (waiting.length < limits.maxQueued)
        await new Promise<void>((resolve) => waiting.push(resolve));
      else throw new BusyError(running, waiting.length);
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
