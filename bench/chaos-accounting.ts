/**
 * The chaos run's books: what became of every operation offered, from what the client saw, what
 * the chain holds and what the service recorded and serves. Pure, so it is tested on its own.
 */
import type { Hash } from "viem";
import type { IncludedOperation } from "./user-operation-events.ts";

/** One operation as the client saw it. */
export interface OfferedOperation {
  hash: Hash;
  /** The service returned its hash, or answered "already known" to a resend after a connection failure. */
  accepted: boolean;
  /** Why the service refused it, when it did (the account's later operations are then not sent). */
  rejection?: string | undefined;
}

/** The service's durable record of an operation, read from its database after the run. */
export interface StoredOperation {
  status: string;
  failureReason?: string | undefined;
}

/** Whether the live services served an included operation after the run. */
export interface ServedOperation {
  receipt: boolean;
  lookup: boolean;
}

export interface ChaosInputs {
  offered: readonly OfferedOperation[];
  /** Every `UserOperationEvent` on chain since the load began. */
  events: readonly IncludedOperation[];
  /** The database's record of each offered operation it holds. */
  stored: ReadonlyMap<Hash, StoredOperation>;
  /** For each offered operation found on chain: what the services answered for it. */
  served: ReadonlyMap<Hash, ServedOperation>;
}

/** How many, and which reasons how often. */
export interface CountByReason {
  count: number;
  reasons: { reason: string; count: number }[];
}

/** What the chaos run reports for one mode. */
export interface ChaosFigures {
  offered: number;
  accepted: number;
  rejected: CountByReason;
  /** Accepted operations with a `UserOperationEvent` on chain. */
  included: number;
  /** Of those, whose execution reverted (included and paid for all the same). */
  includedReverted: number;
  /** Operations on chain although the client never got their hash (the service died answering). */
  includedNotAccepted: number;
  /** Operations with more than one `UserOperationEvent`. */
  includedTwice: number;
  /** Accepted, not on chain, and recorded `dropped` or `failed` with a reason. */
  dropped: CountByReason;
  /** Accepted, never on chain, and never recorded dropped: by their last recorded status ("unknown" when not stored). */
  lost: CountByReason;
  /** Included on chain, but a live service answers `null` to `eth_getUserOperationReceipt`. */
  receiptMissing: number;
  /** Included on chain, but a live service answers `null` (or no transaction) to `eth_getUserOperationByHash`. */
  lookupMissing: number;
  /** Up to ten hashes of each kind of failure, to look into. */
  examples: { lost: Hash[]; includedTwice: Hash[]; receiptMissing: Hash[]; lookupMissing: Hash[] };
}

const EXAMPLES = 10;

/** Settle the books of one run. */
export function tallyChaosRun(inputs: ChaosInputs): ChaosFigures {
  const eventsOf = new Map<Hash, IncludedOperation[]>();
  for (const event of inputs.events)
    eventsOf.set(event.userOpHash, [...(eventsOf.get(event.userOpHash) ?? []), event]);

  const accepted = inputs.offered.filter((op) => op.accepted);
  const onChain = (op: OfferedOperation) => (eventsOf.get(op.hash)?.length ?? 0) > 0;
  const included = accepted.filter(onChain);
  const notIncluded = accepted.filter((op) => !onChain(op));
  const isFinal = (op: OfferedOperation) => {
    const status = inputs.stored.get(op.hash)?.status;
    return status === "dropped" || status === "failed";
  };
  const twice = inputs.offered.filter((op) => (eventsOf.get(op.hash)?.length ?? 0) > 1);
  const onChainOffered = inputs.offered.filter(onChain);
  const receiptMissing = onChainOffered.filter(
    (op) => inputs.served.get(op.hash)?.receipt !== true,
  );
  const lookupMissing = onChainOffered.filter((op) => inputs.served.get(op.hash)?.lookup !== true);
  const lost = notIncluded.filter((op) => !isFinal(op));

  return {
    offered: inputs.offered.length,
    accepted: accepted.length,
    rejected: countByReason(
      inputs.offered.filter((op) => op.rejection !== undefined).map((op) => op.rejection!),
    ),
    included: included.length,
    includedReverted: included.filter((op) =>
      eventsOf.get(op.hash)!.some((event) => !event.success),
    ).length,
    includedNotAccepted: inputs.offered.filter((op) => !op.accepted && onChain(op)).length,
    includedTwice: twice.length,
    dropped: countByReason(
      notIncluded.filter(isFinal).map((op) => {
        const stored = inputs.stored.get(op.hash)!;
        return `${stored.status}: ${stored.failureReason ?? "no reason recorded"}`;
      }),
    ),
    lost: countByReason(lost.map((op) => inputs.stored.get(op.hash)?.status ?? "unknown")),
    receiptMissing: receiptMissing.length,
    lookupMissing: lookupMissing.length,
    examples: {
      lost: lost.slice(0, EXAMPLES).map((op) => op.hash),
      includedTwice: twice.slice(0, EXAMPLES).map((op) => op.hash),
      receiptMissing: receiptMissing.slice(0, EXAMPLES).map((op) => op.hash),
      lookupMissing: lookupMissing.slice(0, EXAMPLES).map((op) => op.hash),
    },
  };
}

/** What is wrong with a run, one line each; none when every accepted operation is accounted for. */
export function chaosFailures(figures: ChaosFigures): string[] {
  return [
    figures.lost.count > 0 ? `${figures.lost.count} lost` : undefined,
    figures.includedTwice > 0 ? `${figures.includedTwice} included twice` : undefined,
    figures.receiptMissing > 0 ? `${figures.receiptMissing} receipts missing` : undefined,
    figures.lookupMissing > 0 ? `${figures.lookupMissing} lookups missing` : undefined,
  ].filter((line) => line !== undefined);
}

function countByReason(reasons: readonly string[]): CountByReason {
  const counts = new Map<string, number>();
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return {
    count: reasons.length,
    reasons: [...counts]
      .map(([reason, count]) => ({ reason, count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
  };
}
