/** The smallest of `values` (`Math.min` does not take bigints). */
export function minOf(first: bigint, ...rest: bigint[]): bigint {
  let smallest = first;
  for (const value of rest) if (value < smallest) smallest = value;
  return smallest;
}

/** The largest of `values` (`Math.max` does not take bigints). */
export function maxOf(first: bigint, ...rest: bigint[]): bigint {
  let largest = first;
  for (const value of rest) if (value > largest) largest = value;
  return largest;
}
