import type { BlockTag, Hash, Hex } from "viem";
import { getLogs } from "../chain/get-logs.ts";
import { decodeHandleOps } from "../userop/decode-handle-ops.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { InvalidParamsError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { decodeUserOperationEvent, userOperationEventTopic } from "../receipt/user-operation-event.ts";

export interface GetFeeHistoryParameters {
  entryPoint: EntryPoint;
  /** How many blocks, ending at `newestBlock`. */
  blockCount: bigint;
  newestBlock: bigint | BlockTag;
}

/**
 * What operations included on this EntryPoint recently paid, one entry per operation in block
 * order, the three arrays aligned by index (unlike a per-transaction history, which would not be):
 * - `actualGasPrice`: `actualGasCost / actualGasUsed` of its `UserOperationEvent`;
 * - `maxFeePerGas`, `maxPriorityFeePerGas`: the fees it offered, from the bundle's calldata.
 */
export interface FeeHistory {
  actualGasPrice: bigint[];
  maxFeePerGas: bigint[];
  maxPriorityFeePerGas: bigint[];
}

/** Read the fee history of an EntryPoint from its `UserOperationEvent` logs and bundle calldata. */
export async function getFeeHistory(client: ChainClient, parameters: GetFeeHistoryParameters): Promise<FeeHistory> {
  const { entryPoint, blockCount } = parameters;
  const newest =
    typeof parameters.newestBlock === "bigint"
      ? await notPastHead(client, parameters.newestBlock)
      : (await client.getBlock({ blockTag: parameters.newestBlock })).number ?? (await client.getBlockNumber());
  const oldest = newest + 1n > blockCount ? newest + 1n - blockCount : 0n;
  const logs = await getLogs(client, { address: entryPoint.address, topics: [userOperationEventTopic], fromBlock: oldest, toBlock: newest });

  const transactions = new Map<Hash, Promise<{ input: Hex }>>();
  const history: FeeHistory = { actualGasPrice: [], maxFeePerGas: [], maxPriorityFeePerGas: [] };
  for (const log of logs.filter((l) => !l.removed)) {
    const event = decodeUserOperationEvent(log);
    let transaction = transactions.get(log.transactionHash);
    if (!transaction) {
      transaction = client.getTransaction({ hash: log.transactionHash });
      transactions.set(log.transactionHash, transaction);
    }
    const op = decodeHandleOps(entryPoint, (await transaction).input).find(
      (o) => o.sender.toLowerCase() === event.sender.toLowerCase() && o.nonce === event.nonce,
    );
    // A bundle sent through another contract has no handleOps calldata to read the fees from.
    if (!op) continue;
    history.actualGasPrice.push(event.actualGasUsed === 0n ? 0n : event.actualGasCost / event.actualGasUsed);
    history.maxFeePerGas.push(op.maxFeePerGas);
    history.maxPriorityFeePerGas.push(op.maxPriorityFeePerGas);
  }
  return history;
}

/** `block`, or -32602 when the chain has not reached it: a bad request, not a node failure. */
async function notPastHead(client: ChainClient, block: bigint): Promise<bigint> {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  if (block > head) throw new InvalidParamsError("newestBlock", `block ${block} is past the chain's head ${head}`);
  return block;
}
