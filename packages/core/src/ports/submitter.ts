import type { Address, Hash } from "viem";
import type { SignedTransaction } from "./relayer-signer.ts";

/** What a submitter may want to know about the bundle it sends (e.g. for conditions on its inclusion). */
export interface SubmittedBundle {
  /** The EntryPoint the bundle calls. */
  entryPoint: Address;
  /** The senders of the bundle's operations. */
  senders: readonly Address[];
  /**
   * The hashes of the bundle's operations, in the bundle's order, as the engine computed them at
   * admission (a simulated chain reports them in its events without hashing every operation again).
   */
  userOpHashes?: readonly Hash[];
}

/**
 * How a signed bundle transaction reaches the chain: the public mempool
 * (`eth_sendRawTransaction`), a private relay, a conditional send, or a rollup sequencer.
 */
export interface Submitter {
  readonly name: string;
  /**
   * Hand over the signed transaction (`transaction.serialized` is the hex that
   * `eth_sendRawTransaction` takes; `transaction.bytes` the same bytes, `transaction.hash` their
   * hash); resolves with its hash once accepted.
   */
  submit(transaction: SignedTransaction, bundle?: SubmittedBundle): Promise<Hash>;
}
