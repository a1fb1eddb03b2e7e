import type { Address, Hex, TransactionSerializable } from "viem";

/** One relayer account, borrowed exclusively until `release`. */
export interface RelayerLease {
  readonly address: Address;
  /** Sign a transaction from this relayer. The key never leaves the signer. */
  signTransaction(transaction: TransactionSerializable): Promise<Hex>;
  /** Give the relayer back to the pool. */
  release(): void;
}

/**
 * The accounts that pay for bundle transactions. A bundle takes one relayer for its whole
 * lifetime (send, replace, inclusion), so nonces never race. Implemented by
 * `@bundlekit/signer-relayer` (local keys); a KMS or remote signer implements the same port.
 */
export interface RelayerSigner {
  /** Every relayer address, for `bundler_config` and balance metrics. */
  readonly addresses: readonly Address[];
  /** Borrow an idle relayer, or undefined when all are busy. */
  lease(): RelayerLease | undefined;
}
