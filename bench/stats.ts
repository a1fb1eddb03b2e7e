/** Summary of a sample of durations in milliseconds; undefined fields when the sample is empty. */
export interface Distribution {
  count: number;
  p50: number | undefined;
  p95: number | undefined;
  max: number | undefined;
  mean: number | undefined;
}

/** The q-quantile (0..1) of ascending `sorted`, interpolated linearly between neighbours. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

/** p50, p95, max and mean of `values`, rounded to 0.1 ms. */
export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (value: number | undefined) =>
    value === undefined ? undefined : Math.round(value * 10) / 10;
  return {
    count: sorted.length,
    p50: round(quantile(sorted, 0.5)),
    p95: round(quantile(sorted, 0.95)),
    max: round(sorted.at(-1)),
    mean: round(
      sorted.length > 0 ? sorted.reduce((sum, v) => sum + v, 0) / sorted.length : undefined,
    ),
  };
}

/**
 * The median of every number across `samples` of one shape, field by field (nested objects
 * too); arrays are concatenated, other values taken from the first sample. A field some samples
 * lack (a phase with no node request in one run, say) is the median of those that have it.
 * Medians because the machine is shared and noisy: one slow run should not move the recorded figure.
 */
export function medianOf<T>(samples: readonly T[]): T {
  const first = samples.find((v) => v !== undefined);
  if (typeof first === "number") {
    const values = samples
      .filter((v): v is T & number => typeof v === "number")
      .sort((a, b) => a - b);
    return (Math.round(quantile(values, 0.5)! * 1e5) / 1e5) as T;
  }
  if (Array.isArray(first)) return samples.flatMap((v) => v as unknown[]) as T;
  if (first === null || typeof first !== "object") return first as T;
  const keys = new Set(samples.flatMap((v) => (v && typeof v === "object" ? Object.keys(v) : [])));
  return Object.fromEntries(
    [...keys].map((key) => [
      key,
      medianOf(samples.map((v) => (v as Record<string, unknown> | undefined)?.[key])),
    ]),
  ) as T;
}
