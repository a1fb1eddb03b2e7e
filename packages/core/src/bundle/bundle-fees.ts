import type { GasPrice } from "../gas/fee-oracle.ts";
import type { UserOperation } from "../userop/types.ts";
import { maxOf, minOf } from "../utils/bigint-math.ts";

/** The fees of a bundle transaction, per gas, in wei. */
export interface BundleFees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * What a bundle of `operations` bids: the fee oracle's suggestion, but never more per gas than
 * the operation paying least would repay (its `maxFeePerGas`, and its `maxPriorityFeePerGas` on
 * top of the base fee), nor than `maxBundleFeePerGas`. A bundle then never costs its relayer more
 * than its operations return.
 */
export function bundleFees(suggested: GasPrice, operations: readonly UserOperation[], maxBundleFeePerGas?: bigint): BundleFees {
  let maxFeePerGas = maxBundleFeePerGas !== undefined && maxBundleFeePerGas < suggested.maxFeePerGas ? maxBundleFeePerGas : suggested.maxFeePerGas;
  let maxPriorityFeePerGas = suggested.maxPriorityFeePerGas;
  for (const op of operations) {
    if (op.maxFeePerGas < maxFeePerGas) maxFeePerGas = op.maxFeePerGas;
    if (op.maxPriorityFeePerGas < maxPriorityFeePerGas) maxPriorityFeePerGas = op.maxPriorityFeePerGas;
  }
  if (maxPriorityFeePerGas > maxFeePerGas) maxPriorityFeePerGas = maxFeePerGas;
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/**
 * The most per gas the operations repay: the lowest `maxFeePerGas` and the lowest
 * `maxPriorityFeePerGas` among them. A bundle bidding within both costs its relayer no more per
 * gas than each operation returns, whatever the base fee; a replacement is never raised above it.
 */
export function repaidFees(operations: readonly UserOperation[]): BundleFees {
  const [first, ...rest] = operations;
  if (first === undefined) return { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n };
  return {
    maxFeePerGas: minOf(first.maxFeePerGas, ...rest.map((op) => op.maxFeePerGas)),
    maxPriorityFeePerGas: minOf(first.maxPriorityFeePerGas, ...rest.map((op) => op.maxPriorityFeePerGas)),
  };
}

/**
 * Fees that replace a transaction at the same nonce: each raised by at least `bumpPercent`
 * (nodes require 10% or more), and at least the current suggestion.
 */
export function bumpedFees(previous: BundleFees, suggested: GasPrice, bumpPercent: bigint): BundleFees {
  const raise = (fee: bigint) => (fee * (100n + bumpPercent)) / 100n + 1n;
  const maxPriorityFeePerGas = maxOf(raise(previous.maxPriorityFeePerGas), suggested.maxPriorityFeePerGas);
  const maxFeePerGas = maxOf(raise(previous.maxFeePerGas), suggested.maxFeePerGas, maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}
