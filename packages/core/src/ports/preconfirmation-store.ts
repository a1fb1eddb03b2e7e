import type { Address, Hash, Hex } from "viem";

/**
 * Where a preconfirmation stands: `promised` when committed, `kept` once the operation is on chain
 * in (or before) the promised block, `broken` once that block passed without it.
 */
export type PreconfirmationStatus = "promised" | "kept" | "broken";

/**
 * A sequencer's commitment to include an operation in a block, as the engine records it and
 * signs it (`preconfirmationTypedData`). `signature` is null when the engine holds no
 * preconfirmation key; `signer` is then the zero address.
 */
export interface Preconfirmation {
  userOpHash: Hash;
  entryPoint: Address;
  chainId: number;
  /** The promised block. */
  blockNumber: bigint;
  /** The transaction the sequencer committed to carry the operation. */
  transactionHash: Hash;
  signer: Address;
  /** EIP-712 signature (65 bytes) of `preconfirmationTypedData(this)` by `signer`. */
  signature: Hex | null;
  status: PreconfirmationStatus;
  /** For `broken`: why. */
  reason?: string | undefined;
}

/** How a promise ended: `kept`, or `broken` for `reason`. */
export type PreconfirmationOutcome = { status: "kept" } | { status: "broken"; reason: string };

/**
 * Durable preconfirmations, one per operation (a later promise for the same operation replaces
 * the earlier one). Several engines sharing one database see each other's. Implementations:
 * `createMemoryPreconfirmationStore` (the engine's default), SQLite and PostgreSQL
 * (`@bundlekit/storage-kysely`); every one passes `preconfirmationStoreContract` (`@bundlekit/testing`).
 */
export interface PreconfirmationStore {
  /** Record promises made at once (one bundle's), replacing earlier ones of the same operations. */
  promise(preconfirmations: readonly Preconfirmation[]): Promise<void>;
  /** The latest preconfirmation of `userOpHash`, in any status. */
  get(userOpHash: Hash): Promise<Preconfirmation | undefined>;
  /**
   * End a `promised` preconfirmation: resolves with it as now stored, or undefined when there is
   * none in `promised` (none made, or already kept or broken: an outcome is final).
   */
  settle(userOpHash: Hash, outcome: PreconfirmationOutcome): Promise<Preconfirmation | undefined>;
  /** Release connections. Optional: stores without resources omit it. */
  close?(): Promise<void>;
}
