import type { ChainClient } from "../ports/chain-client.ts";
import { type Clock, systemClock } from "../ports/clock.ts";

/** Fees to offer now, per gas, in wei. */
export interface GasPrice {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** Base fee of the latest block. */
  baseFeePerGas: bigint;
}

/** Where fee suggestions come from; swap it for a chain with its own fee market. */
export interface FeeOracle {
  getGasPrice(): Promise<GasPrice>;
}

export interface ChainFeeOracleOptions {
  /** Percent added to the suggested fees (e.g. 10 for +10%). Default 0. */
  markupPercent?: number;
  /**
   * Reuse a suggestion for this many milliseconds; calls in between share it (and a request in
   * flight). Admission asks for every operation, so this spares the node two requests each.
   * Default 0: ask the node every time.
   */
  maxAgeMs?: number;
  /** What `maxAgeMs` is measured on. Default: the wall clock. */
  clock?: Clock;
}

/**
 * Fees from the node: the priority fee from `eth_maxPriorityFeePerGas`, and a max fee that
 * survives two full blocks of base-fee growth (2 × base fee + priority fee).
 */
export function createChainFeeOracle(client: ChainClient, options: ChainFeeOracleOptions = {}): FeeOracle {
  const markup = BigInt(100 + (options.markupPercent ?? 0));
  const oracle: FeeOracle = {
    async getGasPrice() {
      const [block, priority] = await Promise.all([
        client.getBlock({ blockTag: "latest" }),
        client.estimateMaxPriorityFeePerGas(),
      ]);
      const baseFeePerGas = block.baseFeePerGas ?? 0n;
      const maxPriorityFeePerGas = (priority * markup) / 100n;
      return {
        baseFeePerGas,
        maxPriorityFeePerGas,
        maxFeePerGas: ((baseFeePerGas * 2n + priority) * markup) / 100n,
      };
    },
  };
  return options.maxAgeMs ? reusedFor(oracle, options.maxAgeMs, options.clock ?? systemClock) : oracle;
}

/** `oracle`, with each suggestion reused for `maxAgeMs`; a failed request is not kept. */
function reusedFor(oracle: FeeOracle, maxAgeMs: number, clock: Clock): FeeOracle {
  let last: { at: number; price: Promise<GasPrice> } | undefined;
  return {
    getGasPrice() {
      if (last && clock.now() - last.at < maxAgeMs) return last.price;
      const current = { at: clock.now(), price: oracle.getGasPrice() };
      current.price.catch(() => {
        if (last === current) last = undefined;
      });
      last = current;
      return current.price;
    },
  };
}
