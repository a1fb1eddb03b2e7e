import type { Address, Hex } from "viem";

/** What `eth_call` may pretend about one account, in the node's wire form. */
export interface AccountOverride {
  balance?: Hex;
  nonce?: Hex;
  code?: Hex;
  /** Replaces the whole storage. */
  state?: Record<Hex, Hex>;
  /** Changes only these slots. */
  stateDiff?: Record<Hex, Hex>;
}

/** Per-account overrides for `eth_call` (geth's state-override set). */
export type StateOverride = Record<Address, AccountOverride>;

/** What a call may pretend about its block (geth's block-override set), in the node's wire form. */
export interface BlockOverride {
  number?: Hex;
  time?: Hex;
  baseFee?: Hex;
  gasLimit?: Hex;
  feeRecipient?: Address;
  prevRandao?: Hex;
}

/**
 * The state a simulation runs on: the node's `latest` (default) or `pending` block, with a state
 * and a block override on top. A block builder's view of the block it is building.
 */
export interface CallState {
  block?: "latest" | "pending" | undefined;
  stateOverride?: StateOverride | undefined;
  blockOverride?: BlockOverride | undefined;
}

/** The outcome of an `eth_call`: returned data, or the revert data when it reverted. */
export type EthCallResult = { reverted: false; data: Hex } | { reverted: true; data: Hex; message: string };
