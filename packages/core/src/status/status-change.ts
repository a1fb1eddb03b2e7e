import type { Hash } from "viem";
import type { Preconfirmation } from "../ports/preconfirmation-store.ts";

/**
 * What happened to an operation, as subscribers and metrics see it:
 * - `pending`: accepted into the pool, or back in it after its bundle was not mined;
 * - `submitted`: sent in the bundle transaction `transactionHash`;
 * - `preconfirmed`: a sequencer that pulled its bundle committed to include it in block
 *   `blockNumber` (pull mode only), before that block is public, with its `preconfirmation`;
 * - `preconfirmation_broken`: that block passed without the operation (`reason`); the operation
 *   then goes back to `pending`, or stays `submitted` while its transaction is still in the node;
 * - `included`: its `UserOperationEvent` is on chain; `success` says whether its execution succeeded;
 * - `failed`: its bundle transaction was mined without it (the bundle reverted, or the op was left out);
 * - `dropped`: it left the pool without being sent, for `reason` (replaced, rejected when
 *   re-validated for a bundle, expired, or cleared).
 */
export type StatusChangeKind = "pending" | "submitted" | "preconfirmed" | "preconfirmation_broken" | "included" | "failed" | "dropped";

export const statusChangeKinds: readonly StatusChangeKind[] = ["pending", "submitted", "preconfirmed", "preconfirmation_broken", "included", "failed", "dropped"];

/** A change in an operation's life. */
export interface StatusChange {
  userOpHash: Hash;
  status: StatusChangeKind;
  transactionHash?: Hash | undefined;
  /** For `preconfirmed` and `preconfirmation_broken`: the block the sequencer committed to include it in. */
  blockNumber?: bigint | undefined;
  /** For `preconfirmed` and `preconfirmation_broken`: the (signed) preconfirmation, as stored. */
  preconfirmation?: Preconfirmation | undefined;
  /** For `included`: whether the operation's execution succeeded. */
  success?: boolean | undefined;
  /** For `failed`, `dropped` and `preconfirmation_broken`: why. For `pending` and `submitted` when an operation comes back (its bundle reverted, its block was reorged out): why. */
  reason?: string | undefined;
}

export type StatusListener = (change: StatusChange) => void;

/** Fan-out of status changes to any number of listeners; a throwing listener never affects the others. */
export function createStatusHub() {
  const listeners = new Set<StatusListener>();
  return {
    emit(change: StatusChange) {
      for (const listener of listeners) {
        try {
          listener(change);
        } catch {
          // a subscriber's failure is its own
        }
      }
    },
    subscribe(listener: StatusListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
