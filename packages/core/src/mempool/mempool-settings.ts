/** The pool: how much it holds, for how long, and how much one unstaked sender may have in it. */
export interface MempoolSettings {
  /** Most pending operations; above it, the policy's `evict` chooses who leaves. Default 10,000. */
  readonly maxSize: number;
  /** Seconds a pending operation may wait to be bundled; 0 keeps it until bundled. Default 300. */
  readonly ttlSeconds: number;
  /**
   * Most operations an unstaked sender may have in the pool (ERC-7562 SAME_SENDER_MEMPOOL_COUNT,
   * UREP-010), as the default policy applies it. Default 4.
   */
  readonly sameSenderCount: number;
}
