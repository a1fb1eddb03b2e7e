import type { Hash, RpcTransaction } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";

/** What the node knows of a transaction: `null` when nothing, `blockNumber` `null` while it waits in the node's pool. */
export type NodeTransaction = Pick<RpcTransaction, "blockNumber"> | null;

/** `eth_getTransactionByHash`, raw: viem's `getTransaction` throws for a transaction the node does not know. */
export function transactionInNode(client: ChainClient, hash: Hash): Promise<NodeTransaction> {
  return client.request({ method: "eth_getTransactionByHash", params: [hash] });
}
