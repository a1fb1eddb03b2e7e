import type { Hash } from "viem";

/** The head of the chain, as the engine needs it to build, price and follow bundles. */
export interface BlockHead {
  number: bigint;
  hash: Hash;
  /**
   * The parent block's hash. Give it where the source has it: the tracker then sees a mined
   * bundle stay canonical from the heads alone, instead of reading its receipt at every block.
   */
  parentHash?: Hash | undefined;
  /** Seconds since the epoch, as in the block header. */
  timestamp: bigint;
  baseFeePerGas: bigint;
  gasLimit: bigint;
}

/**
 * New blocks as they come. The transaction tracker follows sent bundles block by block, and
 * bundles are priced and sized for the latest head. Implemented by polling the node
 * (`createPollingBlockSource`); a simulated chain implements it to drive the engine without one.
 */
export interface BlockSource {
  /** The current head, read now. */
  latest(): Promise<BlockHead>;
  /** Call `listener` with each new head (a new number, or the same number with another hash after a reorg). Returns the unsubscribe function. */
  subscribe(listener: (head: BlockHead) => void): () => void;
}
