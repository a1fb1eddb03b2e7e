import { type Address, decodeAbiParameters, decodeErrorResult, decodeEventLog, type Hash, type Hex, parseAbi, toEventSelector } from "viem";
import { getAddressAt } from "../utils/get-address.ts";
import { entryPoint07Abi } from "viem/account-abstraction";
import { revertReason } from "../utils/revert-reason.ts";

/** `UserOperationEvent`, identical in every EntryPoint version. */
export const userOperationEventTopic = toEventSelector(
  "UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)",
);
/** `IgnoredInitCode(userOpHash, sender, factory)`: v0.9's EntryPoint ignored the factory of a sender that exists. */
export const ignoredInitCodeTopic = toEventSelector("IgnoredInitCode(bytes32,address,address)");
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

/** What the log helpers read of a log, in wire or domain form (`RawLog` or viem's `Log`). */
export type EventLog = Pick<RawLog, "address" | "data"> & { topics: readonly Hex[] };

export interface UserOperationEvent {
  userOpHash: Hash;
  sender: Address;
  paymaster: Address;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
}

/**
 * Decode a `UserOperationEvent` log. Its layout is fixed (three indexed words, four data words), so
 * a well-formed one is read by hand: the tracker decodes every included operation's event. Anything
 * else goes to viem's decoder, which answers or throws as it always has.
 */
export function decodeUserOperationEvent(log: RawLog): UserOperationEvent {
  const { topics, data } = log;
  if (!isWellFormedEvent(log)) return decodeUserOperationEventWithAbi(log);
  const word = (index: number) => BigInt(`0x${data.slice(2 + index * 64, 66 + index * 64)}`);
  return {
    userOpHash: topics[1]!,
    sender: getAddressAt(topics[2]!, 26),
    paymaster: getAddressAt(topics[3]!, 26),
    nonce: word(0),
    success: data.charCodeAt(successDigit) === 49,
    actualGasCost: word(2),
    actualGasUsed: word(3),
  };
}

/**
 * The `userOpHash` and `success` of a `UserOperationEvent` log, as `decodeUserOperationEvent`
 * reads them (and throwing as it does), without checksumming its addresses or reading its gas:
 * all the tracker needs of each operation a bundle included.
 */
export function userOperationOutcome(log: RawLog): Pick<UserOperationEvent, "userOpHash" | "success"> {
  if (!isWellFormedEvent(log)) {
    const { userOpHash, success } = decodeUserOperationEventWithAbi(log);
    return { userOpHash, success };
  }
  return { userOpHash: log.topics[1]!, success: log.data.charCodeAt(successDigit) === 49 };
}

/** The last hex digit of the `success` word (the second of the data). */
const successDigit = 2 + 2 * 64 - 1;
const hexData = /^0x[0-9a-fA-F]*$/;
const addressTopic = /^0x0{24}[0-9a-fA-F]{40}$/;
const wordTopic = /^0x[0-9a-fA-F]{64}$/;

/**
 * Whether `log` is a `UserOperationEvent` laid out as the EntryPoint emits it, to be read by hand:
 * three indexed words (the hash, two addresses), four data words, `success` 0 or 1.
 */
function isWellFormedEvent({ topics, data }: RawLog): boolean {
  if (topics.length !== 4 || topics[0] !== userOperationEventTopic || data.length !== 2 + 4 * 64 || !hexData.test(data)) return false;
  for (let i = 66; i < successDigit; i++) if (data.charCodeAt(i) !== 48) return false;
  const last = data.charCodeAt(successDigit);
  return (last === 48 || last === 49) && addressTopic.test(topics[2]!) && addressTopic.test(topics[3]!) && wordTopic.test(topics[1]!);
}

/** `decodeUserOperationEvent` through viem's ABI decoder: what the hand decoding must equal. */
export function decodeUserOperationEventWithAbi(log: RawLog): UserOperationEvent {
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
export function logsOfUserOperation<L extends EventLog>(logs: readonly L[], userOpHash: Hash, entryPoint: Address): L[] {
  const ep = entryPoint.toLowerCase();
  const isEntryPoint = (log: L) => log.address.toLowerCase() === ep;
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

/** `UserOperationRevertReason` (v0.6+) and `PostOpRevertReason` (v0.7+): why an included operation did not succeed. */
const revertReasonTopics = {
  execution: toEventSelector("UserOperationRevertReason(bytes32,address,uint256,bytes)"),
  postOp: toEventSelector("PostOpRevertReason(bytes32,address,uint256,bytes)"),
};
const postOpRevertedAbi = parseAbi(["error PostOpReverted(bytes returnData)"]);

/**
 * Why the operation `userOpHash` failed, from the EntryPoint's revert-reason event among its
 * logs: the `Error(string)` message or `Panic(<code>)`, else the raw revert data; a postOp's is
 * prefixed `postOp reverted: `. Undefined when the EntryPoint recorded none.
 */
export function userOperationRevertReason(logs: readonly EventLog[], userOpHash: Hash, entryPoint: Address): string | undefined {
  for (const log of logs) {
    if (log.address.toLowerCase() !== entryPoint.toLowerCase() || log.topics[1]?.toLowerCase() !== userOpHash.toLowerCase()) continue;
    const kind = log.topics[0] === revertReasonTopics.execution ? "execution" : log.topics[0] === revertReasonTopics.postOp ? "postOp" : undefined;
    if (!kind) continue;
    const [, data] = decodeAbiParameters([{ type: "uint256" }, { type: "bytes" }], log.data);
    const reason = kind === "postOp" ? unwrapPostOpReverted(data) : data;
    const text = revertReason(reason) ?? reason;
    return kind === "postOp" ? `postOp reverted: ${text}` : text;
  }
  return undefined;
}

/** v0.7+ wrap a postOp's revert data in `PostOpReverted(bytes)`. */
function unwrapPostOpReverted(data: Hex): Hex {
  try {
    const { args } = decodeErrorResult({ abi: postOpRevertedAbi, data });
    return args[0];
  } catch {
    return data;
  }
}
