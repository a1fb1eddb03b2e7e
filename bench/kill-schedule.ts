/** When the chaos run kills the service: random moments, reproducible from a seed. */

/** A pseudo-random source in [0, 1) from a 32-bit seed (mulberry32): the same seed, the same moments. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export interface KillScheduleParameters {
  count: number;
  /** The window, in ms from the start of the load. */
  fromMs: number;
  toMs: number;
  /** Least time between two kills, so the service is back up before the next one. */
  minGapMs: number;
  random: () => number;
}

/**
 * `count` moments spread at random over the window, ascending, at least `minGapMs` apart: uniform
 * points in the window shortened by the gaps, each then moved by the gaps before it. Throws a
 * RangeError when the window cannot hold them.
 */
export function killSchedule({
  count,
  fromMs,
  toMs,
  minGapMs,
  random,
}: KillScheduleParameters): number[] {
  const slack = toMs - fromMs - (count - 1) * minGapMs;
  if (count > 0 && slack < 0) {
    throw new RangeError(
      `${count} kills at least ${minGapMs / 1000} s apart need ${((count - 1) * minGapMs) / 1000} s; the load lasts ${Math.max(0, toMs - fromMs) / 1000} s`,
    );
  }
  return Array.from({ length: count }, () => random() * slack)
    .sort((a, b) => a - b)
    .map((offset, index) => Math.round(fromMs + offset + index * minGapMs));
}
