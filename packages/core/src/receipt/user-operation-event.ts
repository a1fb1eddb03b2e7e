import { type Address, decodeEventLog, type Hash, type Hex, toEventSelector } from "viem";
import { entryPoint07Abi } from "viem/account-abstraction";

/** `UserOperationEvent`, identical in every EntryPoint version. */
export const userOperationEventTopic = toEventSelector(
  "UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)",
);
/** `BeforeExecution()`, emitted once per bundle before the first execution (v0.6+). */
export const beforeExecutionTopic = toEventSelector("BeforeExecution()");

/** A log as the node returns it (hex fields). */
export interface RawLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hash;
  transactionHash: Hash;
  transactionIndex: Hex;
  logIndex: Hex;
  removed?: boolean;
}

export interface UserOperationEvent {
  userOpHash: Hash;
  sender: Address;
  paymaster: Address;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
}

/** Decode a `UserOperationEvent` log. */
export function decodeUserOperationEvent(log: RawLog): UserOperationEvent {
  const { args } = decodeEventLog({
    abi: entryPoint07Abi,
    eventName: "UserOperationEvent",
    topics: log.topics as [Hex, ...Hex[]],
    data: log.data,
  });
  return args as UserOperationEvent;
}

/**
 * The logs that belong to one operation in a bundle transaction: those its EntryPoint emitted
 * between the previous operation's `UserOperationEvent` (or `BeforeExecution`) and its own.
 */
export function logsOfUserOperation(logs: readonly RawLog[], userOpHash: Hash, entryPoint: Address): RawLog[] {
  const ep = entryPoint.toLowerCase();
  const isEntryPoint = (log: RawLog) => log.address.toLowerCase() === ep;
  const end = logs.findIndex(
    (log) => isEntryPoint(log) && log.topics[0] === userOperationEventTopic && log.topics[1]?.toLowerCase() === userOpHash.toLowerCase(),
  );
  if (end < 0) return [];
  let start = end - 1;
  while (start >= 0) {
    const log = logs[start]!;
    if (isEntryPoint(log) && (log.topics[0] === userOperationEventTopic || log.topics[0] === beforeExecutionTopic)) break;
    start--;
  }
  return logs.slice(start + 1, end);
}
