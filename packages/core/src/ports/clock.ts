/** A timer set on a `Clock`; `cancel` stops it if it has not fired. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as the engine sees it: the current time and timers. Every delay in the engine (the
 * bundling schedule, block polling, waits for receipts) goes through it, so tests and research
 * replays can run the real engine on simulated time.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Call `callback` once, `ms` milliseconds from now. */
  setTimeout(callback: () => void, ms: number): Timer;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const handle = setTimeout(callback, ms);
    return { cancel: () => clearTimeout(handle) };
  },
};

/** Resolves after `ms` milliseconds of `clock` time. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
