import { type Address, type Hash, type Hex, numberToHex } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";
import type { RpcMinedLog } from "./get-transaction-receipt.ts";

export interface GetLogsParameters {
  address: Address | Address[];
  /** Topics in order; `null` matches any, a list any of its hashes. */
  topics: (Hash | readonly Hash[] | null)[];
  fromBlock: bigint;
  toBlock: bigint | "latest";
}

/**
 * `eth_getLogs` over mined blocks, in the node's form. Raw rather than viem's `getLogs`, which
 * wants an event ABI and formats the logs: the engine decodes `UserOperationEvent` itself.
 */
export function getLogs(
  client: ChainClient,
  parameters: GetLogsParameters,
): Promise<RpcMinedLog[]> {
  const { address, topics, fromBlock, toBlock } = parameters;
  return client.request<{
    Parameters: [
      filter: {
        address: Address | Address[];
        topics: (Hash | readonly Hash[] | null)[];
        fromBlock: Hex;
        toBlock: Hex | "latest";
      },
    ];
    ReturnType: RpcMinedLog[];
  }>({
    method: "eth_getLogs",
    params: [
      {
        address,
        topics,
        fromBlock: numberToHex(fromBlock),
        toBlock: toBlock === "latest" ? toBlock : numberToHex(toBlock),
      },
    ],
  });
}
