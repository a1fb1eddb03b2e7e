import { RpcRequestError } from "viem";
import { InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { RpcMethod } from "./methods.ts";
import { ForwardedRpcError } from "./rpc-errors.ts";

/**
 * The standard node methods a bundler forwards with `redirectRpc` (those of Skandha's
 * `--redirectRpc`, without `eth_sign`: nothing is ever signed on a caller's behalf).
 */
export const redirectedRpcMethods = [
  "web3_sha3",
  "net_version",
  "net_listening",
  "net_peerCount",
  "eth_protocolVersion",
  "eth_gasPrice",
  "eth_blockNumber",
  "eth_getBalance",
  "eth_getStorageAt",
  "eth_getTransactionCount",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
  "eth_getCode",
  "eth_call",
  "eth_estimateGas",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getTransactionByHash",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionReceipt",
  "eth_getUncleByBlockHashAndIndex",
  "eth_getUncleByBlockNumberAndIndex",
  "eth_newFilter",
  "eth_newBlockFilter",
  "eth_newPendingTransactionFilter",
  "eth_uninstallFilter",
  "eth_getFilterChanges",
  "eth_getFilterLogs",
  "eth_getLogs",
  "eth_maxPriorityFeePerGas",
  "eth_sendRawTransaction",
] as const;

/**
 * Method-table entries that forward `redirectedRpcMethods` to the node behind `client` and
 * answer with its result, or its error (code, message, data), unchanged. Pass them to
 * `createRpcHandler(bundler, { methods })` to serve a node's methods next to the bundler's.
 */
export function createRedirectMethods(client: ChainClient): Record<string, RpcMethod> {
  const forward =
    (method: string): RpcMethod =>
    async (params) => {
      try {
        return await client.request<{ Parameters: unknown; ReturnType: unknown }>({ method, params }, { retryCount: 0 });
      } catch (error) {
        const answer =
          error instanceof Error && "walk" in error
            ? (error as RpcRequestError).walk((e) => e instanceof RpcRequestError)
            : undefined;
        if (answer instanceof RpcRequestError) {
          throw new ForwardedRpcError(answer.code, answer.details, answer.data);
        }
        throw new InfrastructureError(`the node did not answer ${method}`, { cause: error });
      }
    };
  return Object.fromEntries(redirectedRpcMethods.map((method) => [method, forward(method)]));
}
