import type { Clock, Timer } from "../ports/clock.ts";

/** Runs a task on the engine's clock, one run at a time, `interval()` milliseconds after the last ended. */
export interface Scheduler {
  start(): void;
  /** Stop; resolves once a run in progress has ended. */
  stop(): Promise<void>;
  /** Apply a changed interval from now on. */
  reschedule(): void;
}

export function createScheduler(parameters: { clock: Clock; interval: () => number; task: () => Promise<void> }): Scheduler {
  const { clock, interval, task } = parameters;
  let timer: Timer | undefined;
  let running = false;
  let current: Promise<void> = Promise.resolve();

  function next() {
    if (!running) return;
    timer = clock.setTimeout(() => {
      timer = undefined;
      current = task().finally(next);
    }, interval());
  }

  return {
    start() {
      if (running) return;
      running = true;
      next();
    },
    async stop() {
      running = false;
      timer?.cancel();
      timer = undefined;
      await current;
    },
    reschedule() {
      if (!running || !timer) return;
      timer.cancel();
      next();
    },
  };
}
