import type { Hash } from "viem";
import type { UserOperationStatus } from "../ports/mempool-store.ts";

/** A change in an operation's life, as subscribers and metrics see it. */
export interface StatusChange {
  userOpHash: Hash;
  status: UserOperationStatus;
  transactionHash?: Hash | undefined;
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
