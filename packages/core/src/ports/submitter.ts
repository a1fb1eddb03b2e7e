import type { Hash, Hex } from "viem";

/**
 * How a signed bundle transaction reaches the chain: the public mempool
 * (`eth_sendRawTransaction`), a private relay, a conditional send, or a rollup sequencer.
 */
export interface Submitter {
  readonly name: string;
  /** Hand over the signed transaction; resolves with its hash once accepted. */
  submit(signedTransaction: Hex): Promise<Hash>;
}
