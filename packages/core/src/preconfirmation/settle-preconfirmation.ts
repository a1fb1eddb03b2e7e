import type { Hash } from "viem";
import type { Inclusion } from "../ports/mempool-store.ts";
import type { PreconfirmationStore } from "../ports/preconfirmation-store.ts";
import type { StatusListener } from "../status/status-change.ts";

export interface SettlePreconfirmationContext {
  preconfirmations: Pick<PreconfirmationStore, "get" | "settle">;
  emit: StatusListener;
}

/**
 * End the standing promise of `userOpHash` by what the chain shows: kept by an `inclusion` in the
 * promised block (or before), else broken (not included, or later), reported as a
 * `preconfirmation_broken` event with the reason. `promisedBlock` saves a read when the caller
 * knows it; without it, the stored promise says (none: nothing to do).
 */
export async function settlePreconfirmation(
  context: SettlePreconfirmationContext,
  userOpHash: Hash,
  inclusion: Pick<Inclusion, "blockNumber"> | undefined,
  promisedBlock?: bigint,
): Promise<void> {
  const promised = promisedBlock ?? (await promisedBlockOf(context, userOpHash));
  if (promised === undefined) return;
  const reason = !inclusion
    ? `the promised block ${promised} passed without it`
    : inclusion.blockNumber > promised
      ? `it was included in block ${inclusion.blockNumber}, after the promised block ${promised}`
      : undefined;
  const preconfirmation = await context.preconfirmations.settle(userOpHash, reason === undefined ? { status: "kept" } : { status: "broken", reason });
  if (preconfirmation?.status !== "broken") return;
  const { transactionHash, blockNumber } = preconfirmation;
  context.emit({ userOpHash, status: "preconfirmation_broken", transactionHash, blockNumber, reason, preconfirmation });
}

/** The block a standing promise of `userOpHash` names; undefined when none stands. */
export async function promisedBlockOf(context: Pick<SettlePreconfirmationContext, "preconfirmations">, userOpHash: Hash): Promise<bigint | undefined> {
  const stored = await context.preconfirmations.get(userOpHash);
  return stored?.status === "promised" ? stored.blockNumber : undefined;
}
