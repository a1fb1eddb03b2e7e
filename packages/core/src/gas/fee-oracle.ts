import type { ChainClient } from "../ports/chain-client.ts";

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
}

/**
 * Fees from the node: the priority fee from `eth_maxPriorityFeePerGas`, and a max fee that
 * survives two full blocks of base-fee growth (2 × base fee + priority fee).
 */
export function createChainFeeOracle(client: ChainClient, options: ChainFeeOracleOptions = {}): FeeOracle {
  const markup = BigInt(100 + (options.markupPercent ?? 0));
  return {
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
}
