import type { Address, Hash, Hex } from "viem";
import { decodeHandleOps } from "../entrypoint/decode-handle-ops.ts";
import type { EntryPointRegistry } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { UserOperation } from "../userop/types.ts";
import { toQuantity } from "../userop/wire.ts";
import {
  decodeUserOperationEvent,
  logsOfUserOperation,
  type RawLog,
  userOperationEventTopic,
  userOperationRevertReason,
} from "./user-operation-event.ts";

/** `eth_getUserOperationByHash`'s answer in domain form. */
export interface UserOperationLookup {
  userOperation: UserOperation;
  entryPoint: Address;
  transactionHash: Hash | undefined;
  blockHash: Hash | undefined;
  blockNumber: bigint | undefined;
}

/** `eth_getUserOperationReceipt`'s answer: the event's fields, this op's logs and the raw transaction receipt. */
export interface UserOperationReceipt {
  userOpHash: Hash;
  entryPoint: Address;
  sender: Address;
  nonce: bigint;
  paymaster: Address;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  success: boolean;
  /** Why it did not succeed: the revert reason the EntryPoint recorded (see `userOperationRevertReason`). */
  reason?: string;
  logs: RawLog[];
  /** The node's receipt with hex fields, plus `confirmations` and `byzantium`. */
  receipt: Record<string, unknown>;
}

export interface LookupContext {
  client: ChainClient;
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  receiptLookupRange: bigint;
}

/**
 * Find the `UserOperationEvent` of `userOpHash`: from the store's record if it has one, else in
 * recent chain logs. A `submitted` operation is looked for on chain too: its transaction may be
 * mined before this engine records it (a peer's bundle whose claim has not lapsed yet, one sent
 * before a crash).
 */
async function findEvent(context: LookupContext, userOpHash: Hash, known?: MempoolEntry): Promise<RawLog | undefined> {
  const entry = known ?? (await context.store.get(userOpHash));
  if (entry?.inclusion) {
    const receipt = (await context.client.request({
      method: "eth_getTransactionReceipt",
      params: [entry.inclusion.transactionHash],
    } as never)) as { logs: RawLog[] } | null;
    const log = receipt?.logs.find((l) => l.topics[0] === userOperationEventTopic && l.topics[1] === userOpHash);
    if (log) return log;
  }
  if (entry && entry.status !== "included" && entry.status !== "submitted") return undefined;
  return findUserOperationEvent(context, userOpHash);
}

/**
 * The `UserOperationEvent` of `userOpHash` in the canonical chain's last `receiptLookupRange`
 * blocks, on any served EntryPoint: how operations are found on chain whatever transaction
 * carried them (a replacement, another instance's bundle, one sent before a crash).
 */
export async function findUserOperationEvent(
  context: Pick<LookupContext, "client" | "entryPoints" | "receiptLookupRange">,
  userOpHash: Hash,
): Promise<RawLog | undefined> {
  const latest = await context.client.getBlockNumber({ cacheTime: 0 });
  const fromBlock = latest > context.receiptLookupRange ? latest - context.receiptLookupRange : 0n;
  const logs = (await context.client.request({
    method: "eth_getLogs",
    params: [
      {
        address: context.entryPoints.all.map((ep) => ep.address),
        topics: [userOperationEventTopic, userOpHash],
        fromBlock: toQuantity(fromBlock),
        toBlock: "latest",
      },
    ],
  } as never)) as RawLog[];
  return logs.find((log) => !log.removed);
}

/** The receipt of an included operation, or undefined while it is pending or unknown. */
export async function getUserOperationReceipt(context: LookupContext, userOpHash: Hash): Promise<UserOperationReceipt | undefined> {
  const event = await findEvent(context, userOpHash);
  if (!event) return undefined;
  const [receipt, latest] = await Promise.all([
    context.client.request({ method: "eth_getTransactionReceipt", params: [event.transactionHash] } as never) as Promise<
      (Record<string, unknown> & { logs: RawLog[]; blockNumber: Hex }) | null
    >,
    context.client.getBlockNumber({ cacheTime: 0 }),
  ]);
  if (!receipt) return undefined;
  const decoded = decodeUserOperationEvent(event);
  const logs = logsOfUserOperation(receipt.logs, userOpHash, event.address);
  const reason = decoded.success ? undefined : userOperationRevertReason(logs, userOpHash, event.address);
  return {
    userOpHash,
    entryPoint: event.address,
    sender: decoded.sender,
    nonce: decoded.nonce,
    paymaster: decoded.paymaster,
    actualGasCost: decoded.actualGasCost,
    actualGasUsed: decoded.actualGasUsed,
    success: decoded.success,
    ...(reason !== undefined ? { reason } : {}),
    logs,
    receipt: {
      ...receipt,
      // The node may answer a receipt of a block newer than the latest number it reported a moment ago.
      confirmations: `0x${(latest >= BigInt(receipt.blockNumber) ? latest - BigInt(receipt.blockNumber) + 1n : 1n).toString(16)}`,
      byzantium: true,
    },
  };
}

/** The operation with its inclusion, from the store, or from the chain for ones the store no longer holds. */
export async function getUserOperationByHash(context: LookupContext, userOpHash: Hash): Promise<UserOperationLookup | undefined> {
  const entry = await context.store.get(userOpHash);
  if (entry?.status === "submitted") {
    const event = await findEvent(context, userOpHash, entry);
    if (event) {
      return {
        userOperation: entry.userOperation,
        entryPoint: entry.entryPoint,
        transactionHash: event.transactionHash,
        blockHash: event.blockHash,
        blockNumber: BigInt(event.blockNumber),
      };
    }
  }
  if (entry && entry.status !== "failed" && entry.status !== "dropped") {
    return {
      userOperation: entry.userOperation,
      entryPoint: entry.entryPoint,
      transactionHash: entry.inclusion?.transactionHash,
      blockHash: entry.inclusion?.blockHash,
      blockNumber: entry.inclusion?.blockNumber,
    };
  }
  if (entry) return undefined;
  const event = await findEvent(context, userOpHash);
  if (!event) return undefined;
  const entryPoint = context.entryPoints.get(event.address);
  const transaction = await context.client.getTransaction({ hash: event.transactionHash });
  const { sender, nonce } = decodeUserOperationEvent(event);
  const userOperation = decodeHandleOps(entryPoint, transaction.input).find(
    (op) => op.sender.toLowerCase() === sender.toLowerCase() && op.nonce === nonce,
  );
  if (!userOperation) return undefined;
  return {
    userOperation,
    entryPoint: entryPoint.address,
    transactionHash: event.transactionHash,
    blockHash: event.blockHash,
    blockNumber: BigInt(event.blockNumber),
  };
}
