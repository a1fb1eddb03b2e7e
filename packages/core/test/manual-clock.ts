import { type Clock, systemClock } from "../src/ports/clock.ts";

/** A `Clock` whose time stands still until the test moves it; its timers run on real time. */
export interface ManualClock extends Clock {
  /** Move the time `ms` milliseconds on, at once. */
  advance(ms: number): void;
}

/**
 * For an engine on a real anvil: time-outs, TTLs and leases lapse exactly when the test says,
 * with no waiting, while the engine's polling keeps its pace. (On a simulated chain, the
 * simulated clock moves the timers too.)
 */
export function manualClock(start = Date.now()): ManualClock {
  let now = start;
  return {
    now: () => now,
    setTimeout: systemClock.setTimeout,
    advance(ms) {
      now += ms;
    },
  };
}
