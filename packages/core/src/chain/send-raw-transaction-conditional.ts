import type { Address, Hash, Hex } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";

/** The conditions a node checks before it includes the transaction: each account's storage root. */
export interface TransactionConditions {
  knownAccounts: Record<Address, Hash>;
}

/**
 * `eth_sendRawTransactionConditional` (the OP-stack / Arbitrum extension): send a signed
 * transaction that the node includes only while `conditions` hold. Answers the transaction hash.
 */
export function sendRawTransactionConditional(
  client: ChainClient,
  signedTransaction: Hex,
  conditions: TransactionConditions,
): Promise<Hash> {
  return client.request<{
    Parameters: [signedTransaction: Hex, conditions: TransactionConditions];
    ReturnType: Hash;
  }>({
    method: "eth_sendRawTransactionConditional",
    params: [signedTransaction, conditions],
  });
}
