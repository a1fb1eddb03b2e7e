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

/** The outcome of an `eth_call`: returned data, or the revert data when it reverted. */
export type EthCallResult = { reverted: false; data: Hex } | { reverted: true; data: Hex; message: string };
