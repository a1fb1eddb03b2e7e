import { createEntryPointRegistry, decodeHandleOps, decodeUserOperationEvent, getUserOperationHash, isUserOperationV06, type RawLog, userOperationEventTopic } from "@bundlekit/core";
import type { Address, PublicClient } from "viem";
import type { Workload, WorkloadOperation } from "./workload.ts";

export interface CaptureWorkloadParameters {
  client: PublicClient;
  fromBlock: bigint;
  toBlock: bigint;
}

/**
 * A workload from a real chain: every user operation in the `handleOps` transactions of blocks
 * `fromBlock`…`toBlock`, on any canonical EntryPoint, arriving at its block's time. Senders and
 * paymasters are numbered in order of appearance; an operation whose `UserOperationEvent` says its
 * execution failed is marked `reverts`.
 */
export async function captureWorkload({ client, fromBlock, toBlock }: CaptureWorkloadParameters): Promise<Workload> {
  if (toBlock < fromBlock) throw new RangeError(`--to (${toBlock}) is before --from (${fromBlock})`);
  const chainId = await client.getChainId();
  const entryPoints = createEntryPointRegistry();
  const senders = new Map<string, number>();
  const paymasters = new Map<string, number>();
  const operations: WorkloadOperation[] = [];
  let startedAt: bigint | undefined;
  for (let number = fromBlock; number <= toBlock; number++) {
    const block = await client.getBlock({ blockNumber: number, includeTransactions: true });
    startedAt ??= block.timestamp;
    for (const transaction of block.transactions) {
      const entryPoint = transaction.to ? entryPoints.find(transaction.to) : undefined;
      if (!entryPoint || entryPoint.version === "0.6") continue;
      const ops = decodeHandleOps(entryPoint, transaction.input);
      if (ops.length === 0) continue;
      const receipt = await client.getTransactionReceipt({ hash: transaction.hash });
      const failed = new Set(
        (receipt.logs as unknown as RawLog[])
          .filter((log) => log.topics[0] === userOperationEventTopic)
          .map((log) => decodeUserOperationEvent(log))
          .filter((event) => !event.success)
          .map((event) => event.userOpHash),
      );
      for (const op of ops) {
        const key = (op.sender as Address).toLowerCase();
        if (!senders.has(key)) senders.set(key, senders.size);
        const paymaster = isUserOperationV06(op) ? undefined : op.paymaster?.toLowerCase();
        if (paymaster && !paymasters.has(paymaster)) paymasters.set(paymaster, paymasters.size);
        operations.push({
          at: Number(block.timestamp - startedAt) * 1000 + operations.length,
          sender: senders.get(key)!,
          nonce: Number(op.nonce & 0xffffffffffffffffn),
          maxPriorityFeePerGas: op.maxPriorityFeePerGas.toString(),
          maxFeePerGas: op.maxFeePerGas.toString(),
          callGasLimit: op.callGasLimit.toString(),
          ...(paymaster ? { paymaster: paymasters.get(paymaster)! } : {}),
          ...(failed.has(getUserOperationHash(op, entryPoint, chainId)) ? { reverts: true } : {}),
        });
      }
    }
  }
  return {
    description: `captured from chain ${chainId}, blocks ${fromBlock}-${toBlock}: ${operations.length} operations of ${senders.size} senders`,
    senders: senders.size,
    ...(paymasters.size > 0 ? { paymasters: paymasters.size } : {}),
    operations,
  };
}
