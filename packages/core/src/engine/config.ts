import { type Address, parseEther } from "viem";
import { BundlerConfigError } from "../errors/errors.ts";
import type { ReputationConfig } from "../reputation/reputation.ts";
import { type RelayingMode, relayingModes, type SubmitterConfig } from "../submit/configured-submitter.ts";
import type { ValidationConfig } from "../validation/create-simulator.ts";
import type { TransactionTrackerConfig } from "../submit/transaction-tracker.ts";
import { erc7562Limits, handleOpsCalldataOverhead } from "../validation/size-limits.ts";

export { BundlerConfigError };

/** How the engine runs. Every field has a default; see docs/configuration.md. */
export interface BundlerConfig extends ReputationConfig, SubmitterConfig, TransactionTrackerConfig, ValidationConfig {
  /** Milliseconds between bundle attempts when running automatically. Default 1000. */
  bundleInterval: number;
  /** At most this many operations per bundle, a cap besides gas (`maxBundleGas`). Default 1000. */
  bundleSize: number;
  /**
   * Most operation gas per bundle (the sum of each operation's limits, as `handleOps` may spend
   * them). Default: what fits the chain's block gas limit with `bundleGasLimitMarkup` on top.
   */
  maxBundleGas: bigint | undefined;
  /** Milliseconds between polls of the node for a new block (the transaction tracker's pace). Default 500. */
  blockPollingInterval: number;
  /**
   * `auto` bundles on the interval; `manual` only on `sendBundleNow`; `pull` never pushes: a
   * sequencer pulls bundles with `proposeBundle`, and committed ones are reported `preconfirmed`.
   * Default `auto`.
   */
  bundlingMode: "auto" | "manual" | "pull";
  /** Who receives the bundle's fee refunds. Default: the relayer that sends the bundle. */
  beneficiary: Address | undefined;
  /** Verification gas cap used in simulation, and the most verification gas estimation tries. Default 10,000,000. */
  validationGasLimit: bigint;
  /** The most call (and postOp) gas estimation tries. Default 10,000,000. */
  executionGasLimit: bigint;
  /** Gas added to each estimated limit (after the markup). Default 0. */
  estimationStaticBuffer: bigint;
  /** Percent added to each estimated limit: the least gas at which its phase succeeds. Default 3. */
  estimationGasMarkupPercent: bigint;
  /** Percent added to the estimated preVerificationGas. Default 5. */
  pvgMarkup: bigint;
  /** Percent added to the fee oracle's suggestion (`bundler_getGasPrice`, estimates, bundle fees). Default 0. */
  gasPriceMarkup: number;
  /** Percent added to a bundle's gas (its `eth_estimateGas`) for the transaction's gas limit. Default 20. */
  bundleGasLimitMarkup: bigint;
  /** How far back (blocks) receipts and lookups search the chain. Default 1024. */
  receiptLookupRange: bigint;
  /** Milliseconds a claimed bundle may take before its operations return to the pool. Default 60,000. */
  bundleClaimLeaseMs: number;
  /** Milliseconds a pulled bundle's operations stay claimed without `commitBundle` or `releaseBundle`. Default 5,000. */
  proposalLeaseMs: number;
  /** Milliseconds `sendBundleNow` waits for the bundles it sent to be mined. Default 60,000. */
  receiptTimeoutMs: number;

  /** Opens the `debug_bundler_*` methods to every caller; for test networks only. Default false. */
  testingMode: boolean;
  /**
   * The stand-alone service forwards the standard node methods (`eth_call`, `eth_getBalance`, …)
   * to the node it reads from. Default false: they answer -32601.
   */
  redirectRpc: boolean;
  /** Relayers whose balance (wei) is below this are not leased for bundles. Default 0.1 ETH. */
  minSignerBalance: bigint;
  /** Address of Multicall3; relayer balances are read through it in one call. Default the canonical deployment. */
  multicall: Address;
  /** A block-explorer API key. A secret: `bundler_config` shows only whether one is set. Default unset. */
  explorerApiKey: string | undefined;
  /** Bundles go out with `eth_sendRawTransactionConditional`; same as `relayingMode: "conditional"`. Default false. */
  conditionalTransactions: boolean;
  /** Reject operations whose fees are too far below the fee oracle's suggestion. Default false. */
  enforceGasPrice: boolean;
  /** With `enforceGasPrice`: how many percent below the suggestion an operation's fees may be. Default 10. */
  enforceGasPriceThreshold: number;
  /** Bundle transactions carry an EIP-2930 access list from `eth_createAccessList`. Default false. */
  eip2930: boolean;
  /**
   * Send bundles without re-simulating `handleOps` first: failing operations are not dropped
   * beforehand, and the gas limit is the sum of the operations' own limits. Default false.
   */
  skipBundleValidation: boolean;

  /** Least stake (wei) for a staked entity. Default 1 ETH. */
  minStake: bigint;
  /** Least unstake delay (seconds) for a staked entity. Default 86,400. */
  minUnstakeDelay: number;
  /** Most pending operations the pool holds; above it, the policy's `evict` chooses who leaves. Default 10,000. */
  maxMempoolSize: number;
  /** Seconds a pending operation may stay in the mempool; 0 keeps it until bundled. Default 300. */
  useropsTTL: number;

  /**
   * Most simulations (`sendUserOperation` admissions and `estimateUserOperationGas` runs) in
   * progress at once, across all callers. Default 16.
   */
  maxConcurrentSimulations: number;
  /** Most simulations waiting for a slot; past it a request fails at once with -32005 (busy). Default 32. */
  maxQueuedSimulations: number;

  /** Most bytes of an operation ABI-encoded as its EntryPoint takes it (ERC-7562 LIM-010). Default 8192. */
  maxUserOperationSize: number;
  /** Most bytes of `context` a paymaster's validation may return (LIM-020). Default 2048. */
  maxPaymasterContextSize: number;
  /** Most bytes of `handleOps` calldata in one bundle (LIM-040). Default 262,144. */
  maxBundleCalldataSize: number;
  /** Most bytes of paymaster `context`, summed over a bundle's operations (LIM-050). Default 65,536. */
  maxBundleContextSize: number;
}

export const defaultBundlerConfig: BundlerConfig = {
  bundleInterval: 1000,
  bundleSize: 1000,
  maxBundleGas: undefined,
  blockPollingInterval: 500,
  bundleReplaceAfterBlocks: 3,
  bundleFeeBumpPercent: 15n,
  maxBundleFeePerGas: undefined,
  maxBundleAttempts: 3,
  reorgDepth: 12,
  bundlingMode: "auto",
  beneficiary: undefined,
  validationGasLimit: 10_000_000n,
  executionGasLimit: 10_000_000n,
  estimationStaticBuffer: 0n,
  estimationGasMarkupPercent: 3n,
  pvgMarkup: 5n,
  gasPriceMarkup: 0,
  bundleGasLimitMarkup: 20n,
  receiptLookupRange: 1024n,
  bundleClaimLeaseMs: 60_000,
  proposalLeaseMs: 5_000,
  receiptTimeoutMs: 60_000,
  testingMode: false,
  redirectRpc: false,
  minSignerBalance: parseEther("0.1"),
  multicall: "0xcA11bde05977b3631167028862bE2a173976CA11",
  explorerApiKey: undefined,
  conditionalTransactions: false,
  rpcEndpointSubmit: undefined,
  enforceGasPrice: false,
  enforceGasPriceThreshold: 10,
  eip2930: false,
  relayingMode: "classic",
  skipBundleValidation: false,
  minInclusionDenominator: 10,
  throttlingSlack: 10,
  banSlack: 50,
  minStake: parseEther("1"),
  minUnstakeDelay: 86_400,
  whitelistedEntities: { paymaster: [], account: [], factory: [] },
  maxMempoolSize: 10_000,
  useropsTTL: 300,
  maxConcurrentSimulations: 16,
  maxQueuedSimulations: 32,
  maxUserOperationSize: erc7562Limits.maxUserOperationSize,
  maxPaymasterContextSize: erc7562Limits.maxPaymasterContextSize,
  maxBundleCalldataSize: erc7562Limits.maxBundleCalldataSize,
  maxBundleContextSize: erc7562Limits.maxBundleContextSize,
  validationMode: "safe",
  validationTracer: "in-process",
  tracerWorkers: 2,
  p256Precompile: false,
};

/**
 * The ERC-7562 size limits must be positive integers, and an operation admitted within
 * `maxUserOperationSize` and `maxPaymasterContextSize` must fit a bundle alone: otherwise it would
 * wait in the pool for ever.
 */
function checkSizeLimits(config: BundlerConfig): void {
  for (const field of ["maxUserOperationSize", "maxPaymasterContextSize", "maxBundleCalldataSize", "maxBundleContextSize"] as const) {
    if (!Number.isSafeInteger(config[field]) || config[field] <= 0) throw new BundlerConfigError(`${field} must be a positive integer of bytes`);
  }
  const loneOperationCalldata = handleOpsCalldataOverhead + 32 + config.maxUserOperationSize;
  if (loneOperationCalldata > config.maxBundleCalldataSize) {
    throw new BundlerConfigError(
      `maxBundleCalldataSize (${config.maxBundleCalldataSize}) must hold one operation of maxUserOperationSize (${loneOperationCalldata} bytes of handleOps calldata)`,
    );
  }
  if (config.maxPaymasterContextSize > config.maxBundleContextSize) {
    throw new BundlerConfigError(`maxBundleContextSize (${config.maxBundleContextSize}) must be at least maxPaymasterContextSize (${config.maxPaymasterContextSize})`);
  }
}

/**
 * Defaults filled in and checked: an unknown `relayingMode` throws `BundlerConfigError`, and
 * `conditionalTransactions` and `relayingMode: "conditional"` are made to agree.
 */
export function resolveBundlerConfig(config: Partial<BundlerConfig> = {}): BundlerConfig {
  const resolved: BundlerConfig = { ...defaultBundlerConfig, ...config };
  if (!relayingModes.includes(resolved.relayingMode as RelayingMode)) {
    throw new BundlerConfigError(`relayingMode must be one of ${relayingModes.join(", ")}, got "${String(resolved.relayingMode)}"`);
  }
  if (resolved.rpcEndpointSubmit !== undefined && !/^(https?|wss?):\/\/[^\s]+$/.test(resolved.rpcEndpointSubmit)) {
    throw new BundlerConfigError("rpcEndpointSubmit must be an http(s) or ws(s) URL");
  }
  checkSizeLimits(resolved);
  if (!Number.isSafeInteger(resolved.maxConcurrentSimulations) || resolved.maxConcurrentSimulations < 1) {
    throw new BundlerConfigError("maxConcurrentSimulations must be a positive integer");
  }
  if (!Number.isSafeInteger(resolved.maxQueuedSimulations) || resolved.maxQueuedSimulations < 0) {
    throw new BundlerConfigError("maxQueuedSimulations must be an integer of at least 0");
  }
  if (resolved.conditionalTransactions) resolved.relayingMode = "conditional";
  resolved.conditionalTransactions = resolved.relayingMode === "conditional";
  return resolved;
}
