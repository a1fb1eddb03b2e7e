import type { Address, Hex } from "viem";

/** The account's or paymaster's packed `validationData`, unpacked. */
export interface ValidationData {
  /** `address(0)` valid, `address(1)` signature failure, else an aggregator. */
  aggregator: Address;
  signatureFailed: boolean;
  /** Seconds (block number when `blockRange`); 0 means no lower bound. */
  validAfter: bigint;
  /** Seconds (block number when `blockRange`); `2^48-1` when the operation never expires. */
  validUntil: bigint;
  /**
   * v0.9+: the range is in block numbers, not seconds (the top bit of both bounds set; the
   * bounds here have it cleared). The operation is valid in blocks `validAfter + 1` to `validUntil`.
   */
  blockRange?: boolean | undefined;
}

/** Stake of an entity as the EntryPoint reports it. */
export interface StakeInfo {
  stake: bigint;
  unstakeDelaySec: bigint;
}

/** What `simulateValidation` tells about an operation, the same for every EntryPoint version. */
export interface ValidationResult {
  /** Gas used before execution, including `preVerificationGas`. */
  preOpGas: bigint;
  prefund: bigint;
  account: ValidationData;
  paymaster: ValidationData | undefined;
  /** The `context` the paymaster's validation returned for its `postOp`; `0x` without one. */
  paymasterContext: Hex;
  sender: StakeInfo;
  factory: StakeInfo;
  paymasterStake: StakeInfo;
}
