import { type Address, formatTransactionReceipt, type Hash, type TransactionReceipt } from "viem";
import type { UserOperationReceipt as ViemUserOperationReceipt } from "viem/account-abstraction";
import { getLogs } from "../chain/get-logs.ts";
import { getTransactionReceipt, type RpcMinedReceipt } from "../chain/get-transaction-receipt.ts";
import { transactionInNode } from "../chain/transaction-in-node.ts";
import { decodeHandleOps } from "../userop/decode-handle-ops.ts";
import type { EntryPointRegistry } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { Preconfirmation } from "../ports/preconfirmation-store.ts";
import type { UserOperation } from "../userop/types.ts";
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
  /** The operation's latest preconfirmation, in any status; absent when none was made. */
  preconfirmation?: Preconfirmation | undefined;
}

/**
 * The bundle transaction's receipt in domain form: viem's `TransactionReceipt` (bigint quantities,
 * number indices, `status` "success" | "reverted", `type` "eip1559" …, logs likewise), as
 * viem's `formatTransactionReceipt` makes it, plus how deep it lies. Fields viem does not type
 * (a chain's own, such as OP's `l1Fee`, and the receipt's `blockTimestamp`, which nodes send in
 * different forms) are kept as the node sent them, so the wire can pass them on unchanged.
 */
export type UserOperationTransactionReceipt = Omit<TransactionReceipt, "blockTimestamp"> & {
  /** Blocks from the receipt's block to the latest, both counted: 1 in the block of inclusion. */
  confirmations: bigint;
};

/**
 * `eth_getUserOperationReceipt`'s answer in domain form: the event's fields, this operation's logs
 * and the bundle transaction's receipt. It is viem's `UserOperationReceipt`, with `paymaster`
 * always set (the zero address when none) and `receipt.confirmations`; the RPC layer writes it as
 * hex quantities.
 */
export interface UserOperationReceipt extends ViemUserOperationReceipt {
  paymaster: Address;
  /** Why it did not succeed: the revert reason the EntryPoint recorded (see `userOperationRevertReason`). */
  reason?: string;
  receipt: UserOperationTransactionReceipt;
}

/** A bundle receipt the transaction tracker read when the bundle was mined, kept for lookups, and the latest block the tracker followed. */
export interface MinedReceipt {
  receipt: RpcMinedReceipt;
  head: bigint;
}

export interface LookupContext {
  client: ChainClient;
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  receiptLookupRange: bigint;
  /** The receipts the transaction tracker kept of the bundles it saw mined (`TransactionTracker.minedReceipt`). */
  minedReceipt?: ((transactionHash: Hash) => MinedReceipt | undefined) | undefined;
}

/**
 * Find the `UserOperationEvent` of `userOpHash`: first in the receipt of the transaction the
 * store records for it (`included`, or `submitted`: recorded before it is sent, by this engine or
 * a peer sharing the store), else in recent chain logs. A `submitted` operation whose transaction
 * the node still holds unmined is on chain in no transaction yet (another at the same nonce
 * would have displaced it), so it costs no log scan; one whose transaction is gone (replaced, or
 * mined without it) is looked for in the logs, as is an operation the store does not hold.
 */
async function findEvent(context: LookupContext, userOpHash: Hash, known?: MempoolEntry): Promise<{ event: RawLog; receipt?: RpcMinedReceipt } | undefined> {
  const entry = known ?? (await context.store.get(userOpHash));
  const recorded = entry?.inclusion?.transactionHash ?? (entry?.status === "submitted" ? entry.transactionHash : undefined);
  if (recorded) {
    const receipt = await getTransactionReceipt(context.client, recorded);
    const event = receipt?.logs.find((l) => l.topics[0] === userOperationEventTopic && l.topics[1] === userOpHash);
    if (event) return { event, receipt: receipt! };
    if (!receipt && entry?.status === "submitted" && (await transactionInNode(context.client, recorded))) return undefined;
  }
  if (entry && entry.status !== "included" && entry.status !== "submitted") return undefined;
  const event = await findUserOperationEvent(context, userOpHash);
  return event && { event };
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
  const logs = await getLogs(context.client, {
    address: context.entryPoints.all.map((ep) => ep.address),
    topics: [userOperationEventTopic, userOpHash],
    fromBlock,
    toBlock: "latest",
  });
  return logs.find((log) => !log.removed);
}

/**
 * The receipt of an included operation, or undefined while it is pending or unknown. An operation
 * this engine saw included is answered from the receipt its tracker kept, with one node request:
 * the block at its height, which must still be the receipt's, so a receipt whose block was
 * reorged out is never served, at any depth and before the tracker notices. Others are read from
 * the node: the recorded transaction's receipt, else the logs.
 */
export async function getUserOperationReceipt(context: LookupContext, userOpHash: Hash): Promise<UserOperationReceipt | undefined> {
  const entry = await context.store.get(userOpHash);
  const kept = await keptReceipt(context, entry);
  if (kept) return userOperationReceipt(userOpHash, kept.event, kept.receipt, kept.head);
  const found = await findEvent(context, userOpHash, entry);
  if (!found) return undefined;
  const { event } = found;
  // The receipt the record's event came from is reused; one found in the logs is read.
  const [rpcReceipt, latest] = await Promise.all([
    found.receipt ?? getTransactionReceipt(context.client, event.transactionHash),
    context.client.getBlockNumber({ cacheTime: 0 }),
  ]);
  if (!rpcReceipt) return undefined;
  return userOperationReceipt(userOpHash, event, rpcReceipt, latest);
}

/** The tracker's kept receipt of an included operation, while its block is canonical. */
async function keptReceipt(context: LookupContext, entry: MempoolEntry | undefined) {
  const inclusion = entry?.status === "included" ? entry.inclusion : undefined;
  const kept = inclusion && context.minedReceipt?.(inclusion.transactionHash);
  if (!kept || kept.receipt.blockHash !== inclusion.blockHash) return undefined;
  const event = kept.receipt.logs.find((l) => l.topics[0] === userOperationEventTopic && l.topics[1] === entry!.userOpHash);
  if (!event) return undefined;
  const block = await context.client.getBlock({ blockNumber: inclusion.blockNumber, includeTransactions: false });
  if (block.hash !== inclusion.blockHash) return undefined;
  return { ...kept, event };
}

/** The domain receipt of `userOpHash` from its event, the bundle's receipt and the latest block number. */
function userOperationReceipt(userOpHash: Hash, event: RawLog, rpcReceipt: RpcMinedReceipt, latest: bigint): UserOperationReceipt {
  const receipt = formatTransactionReceipt(rpcReceipt);
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
      confirmations: latest >= receipt.blockNumber ? latest - receipt.blockNumber + 1n : 1n,
    },
  };
}

/** The operation with its inclusion, from the store, or from the chain for ones the store no longer holds. */
export async function getUserOperationByHash(context: LookupContext, userOpHash: Hash): Promise<UserOperationLookup | undefined> {
  const entry = await context.store.get(userOpHash);
  if (entry?.status === "submitted") {
    const event = (await findEvent(context, userOpHash, entry))?.event;
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
  const event = (await findEvent(context, userOpHash))?.event;
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
