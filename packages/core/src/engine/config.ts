import type { Address } from "viem";

/** How the engine runs. Every field has a default; see docs/configuration.md. */
export interface BundlerConfig {
  /** Milliseconds between bundle attempts when running automatically. Default 1000. */
  bundleInterval: number;
  /** At most this many operations per bundle. Default 10. */
  bundleSize: number;
  /** `auto` bundles on the interval; `manual` only on `sendBundleNow`. Default `auto`. */
  bundlingMode: "auto" | "manual";
  /** Who receives the bundle's fee refunds. Default: the relayer that sends the bundle. */
  beneficiary: Address | undefined;
  /** Verification gas cap used in simulation and estimation. Default 10,000,000. */
  validationGasLimit: bigint;
  /** Call gas cap used in estimation. Default 10,000,000. */
  executionGasLimit: bigint;
  /** Gas added to estimated verification and call gas. Default 10,000. */
  estimationStaticBuffer: bigint;
  /** Percent added to estimated verification and call gas. Default 10. */
  estimationGasMarkupPercent: bigint;
  /** Percent added to the estimated preVerificationGas. Default 5. */
  pvgMarkupPercent: bigint;
  /** Percent added to the network's fee suggestion (`bundler_getGasPrice`, estimates). Default 0. */
  gasPriceMarkupPercent: number;
  /** Percent added to `eth_estimateGas` of a bundle for its gas limit. Default 20. */
  bundleGasLimitMarkupPercent: bigint;
  /** How far back (blocks) receipts and lookups search the chain. Default 1024. */
  receiptLookupRange: bigint;
  /** Milliseconds a claimed bundle may take before its operations return to the pool. Default 60,000. */
  bundleClaimLeaseMs: number;
  /** Milliseconds to wait for a bundle transaction's receipt. Default 60,000. */
  receiptTimeoutMs: number;
}

export const defaultBundlerConfig: BundlerConfig = {
  bundleInterval: 1000,
  bundleSize: 10,
  bundlingMode: "auto",
  beneficiary: undefined,
  validationGasLimit: 10_000_000n,
  executionGasLimit: 10_000_000n,
  estimationStaticBuffer: 10_000n,
  estimationGasMarkupPercent: 10n,
  pvgMarkupPercent: 5n,
  gasPriceMarkupPercent: 0,
  bundleGasLimitMarkupPercent: 20n,
  receiptLookupRange: 1024n,
  bundleClaimLeaseMs: 60_000,
  receiptTimeoutMs: 60_000,
};
