import type { BlockHead } from "./block-source.ts";
import type { Admission, MempoolEntry, NewMempoolEntry } from "./mempool-store.ts";

/** What a policy sees when a validated operation asks to enter the pool. */
export interface AdmissionRequest {
  entry: NewMempoolEntry;
  /**
   * The sender's operations already in the pool on this EntryPoint, by nonce, as
   * `MempoolStore.admit` reads them in the step that stores the entry.
   */
  senderOperations: readonly MempoolEntry[];
  /** Whether the sender has at least `minStake` staked for `minUnstakeDelay` (ERC-7562 limits unstaked senders). */
  senderStaked: boolean;
}

/** What one bundle may hold, and the block it is built for. */
export interface BundleLimits {
  /** The sum of the chosen operations' `gasOf` must not exceed this. */
  gasBudget: bigint;
  /** At most this many operations (`bundleSize`, when set). */
  maxOperations: number;
  /** The gas an operation takes in a bundle, from its limits (`bundleGasOf`). */
  gasOf(entry: MempoolEntry): bigint;
  /** The head the bundle is built on; it goes into the next block. */
  block: Pick<BlockHead, "number" | "baseFeePerGas" | "timestamp">;
}

/**
 * The mempool's rules, apart from its storage: who gets in, and what goes into a bundle. Swap it
 * to try another ordering or admission rule; it is pure and synchronous, so two policies can be
 * compared on a recorded workload without a chain. The default (`createDefaultMempoolPolicy`)
 * follows ERC-4337 and ERC-7562.
 */
export interface MempoolPolicy {
  readonly name: string;
  /**
   * Admit `request.entry` (already validated by simulation and reputation), or throw a domain
   * error saying why not (`MempoolRejectionError`, or another `BundlerError`). Runs inside `MempoolStore.admit`, on the sender's live
   * operations, so it must be pure and synchronous. A pooled operation with the entry's nonce
   * must be replaced or the entry refused: the pool holds one operation per sender and nonce.
   */
  admit(request: AdmissionRequest): Admission;
  /**
   * Choose a bundle's operations, in bundle order, from `candidates` within `limits`: claimed
   * operations, oldest first, at most one per sender (each sender's lowest nonce), each able to
   * pay the block's base fee. Candidates left out go back to the pool for a later bundle. The
   * engine enforces the limits whatever the policy returns.
   */
  select(candidates: readonly MempoolEntry[], limits: BundleLimits): readonly MempoolEntry[];
  /**
   * Which `excess` of the `pending` operations leave when the pool holds more than
   * `maxMempoolSize` (they are dropped as "evicted"). The engine drops only pending operations
   * offered here, at most `excess`. Default (`evictLowestValue`): the lowest priority fee first,
   * the newest first among equals.
   */
  evict?(pending: readonly MempoolEntry[], context: { excess: number; now: number }): readonly MempoolEntry[];
}
