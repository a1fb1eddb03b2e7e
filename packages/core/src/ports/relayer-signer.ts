import type { Address, Hash, Hex, TransactionSerializable } from "viem";

/**
 * A signed transaction as the engine carries it from the signer to the `Submitter`: its bytes,
 * their hash, and the same bytes as hex. A bundle transaction carries tens of kilobytes of
 * calldata; each is converted and hashed once on its way.
 */
export interface SignedTransaction {
  /** The serialized signed transaction, as `eth_sendRawTransaction` takes it. */
  readonly serialized: Hex;
  /** The same, as bytes. */
  readonly bytes: Uint8Array;
  /** The transaction hash: keccak256 of `bytes`. */
  readonly hash: Hash;
}

/** One relayer account, borrowed exclusively until `release`. */
export interface RelayerLease {
  readonly address: Address;
  /**
   * Sign a transaction from this relayer. The key never leaves the signer. The serialized signed
   * transaction as hex (what a viem account's `signTransaction` returns), or as a
   * `SignedTransaction` when the signer has its bytes and hash already (`signedTransaction`).
   */
  signTransaction(transaction: TransactionSerializable): Promise<Hex | SignedTransaction>;
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
