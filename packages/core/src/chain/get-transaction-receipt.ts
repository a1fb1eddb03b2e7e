import type { Hash, Hex, Log, RpcTransactionReceipt } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";

/** A log of a mined block as the node sends it: hex quantities, block and transaction fields set. */
export type RpcMinedLog = Log<Hex, Hex, false>;

/** A mined transaction's receipt as the node sends it (viem's `RpcTransactionReceipt`), its logs mined. */
export type RpcMinedReceipt = Omit<RpcTransactionReceipt, "logs"> & { logs: RpcMinedLog[] };

/**
 * `eth_getTransactionReceipt`, in the node's form: `null` while the transaction is not mined.
 * Raw rather than viem's `getTransactionReceipt`, which throws for a missing receipt and formats
 * what the engine reads as the node sent it.
 */
export function getTransactionReceipt(
  client: ChainClient,
  hash: Hash,
): Promise<RpcMinedReceipt | null> {
  return client.request<{ Parameters: [hash: Hash]; ReturnType: RpcMinedReceipt | null }>({
    method: "eth_getTransactionReceipt",
    params: [hash],
  });
}
