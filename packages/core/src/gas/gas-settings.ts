/** Gas estimation, fee suggestions and the fee floor at admission. Gas amounts are bigints, percentages integers. */
export interface GasSettings {
  /** Verification gas cap in simulation, and the most verification gas estimation tries. Default 10,000,000. */
  readonly validationGasLimit: bigint;
  /** The most call (and postOp) gas estimation tries. Default 10,000,000. */
  readonly executionGasLimit: bigint;
  /** Gas added to each estimated limit, after the markup. Default 0. */
  readonly estimationStaticBuffer: bigint;
  /** Percent added to each estimated limit (the least gas at which its phase succeeds). Default 3. */
  readonly estimationMarkupPercent: number;
  /** Percent added to the estimated preVerificationGas. Default 5. */
  readonly preVerificationGasMarkupPercent: number;
  /** Percent added to the fee oracle's suggestion (`bundler_getGasPrice`, estimates, bundle fees). Default 0. */
  readonly gasPriceMarkupPercent: number;
  /** Refuse operations whose fees are too far below the fee oracle's suggestion. Default false. */
  readonly enforceGasPrice: boolean;
  /** With `enforceGasPrice`: how many percent below the suggestion an operation's fees may be. Default 10. */
  readonly enforceGasPriceThresholdPercent: number;
}
