import type { Hash } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Submitter } from "../ports/submitter.ts";

/** Sends bundles to the node's public mempool with `eth_sendRawTransaction`. */
export function createClassicSubmitter(client: ChainClient): Submitter {
  return {
    name: "classic",
    submit: (transaction) => client.sendRawTransaction({ serializedTransaction: transaction.serialized }) as Promise<Hash>,
  };
}
