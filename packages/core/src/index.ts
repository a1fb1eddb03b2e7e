// @bundlekit/core: the ERC-4337 bundler engine. Named exports only; what is not here is internal.
// `@bundlekit/core/simulation` holds the simulated chain, clock and seeded random for replays;
// `@bundlekit/testing` the contract suites every adapter runs against itself.

// Engine: create it, configure it, follow what happens to each operation.
export {
  type Bundler,
  type CreateBundlerParameters,
  createBundler,
} from "./engine/create-bundler.ts";
export type { AbortOptions } from "./engine/abortable.ts";
export {
  type BundlerSettings,
  type BundlerSettingsInput,
  type BundlingMode,
  type BundlingSettings,
  bundlerSettingRules,
  engineSettingNames,
  checkSetting,
  defaultBundlerSettings,
  type GasSettings,
  type MempoolSettings,
  mergeBundlerSettings,
  resolveBundlerSettings,
  type SettingRule,
} from "./engine/settings.ts";
export type { BundlingState } from "./engine/bundling-loop.ts";
export { BundlerConfigError } from "./errors/bundler-config-error.ts";
export type { BundleProposal, ProposeBundleRequest } from "./engine/bundle-puller.ts";
export {
  type StatusChange,
  type StatusChangeKind,
  type StatusListener,
  statusChangeKinds,
} from "./status/status-change.ts";

// Ports: what adapters implement, with the engine's default implementations.
export type { ChainClient } from "./ports/chain-client.ts";
export type { BlockHead, BlockSource } from "./ports/block-source.ts";
export { type Clock, sleep, systemClock, type Timer } from "./ports/clock.ts";
export { type Logger, silentLogger } from "./ports/logger.ts";
export type { RelayerLease, RelayerSigner, SignedTransaction } from "./ports/relayer-signer.ts";
export type { SubmittedBundle, Submitter } from "./ports/submitter.ts";
export type { AdmissionRequest, BundleLimits, MempoolPolicy } from "./ports/mempool-policy.ts";
export type { HandleOpsEstimate, SimulatedValidation, Simulator } from "./ports/simulator.ts";
export type {
  TraceCallRequest,
  TracedValidation,
  ValidationTracer,
} from "./ports/validation-tracer.ts";
export {
  type Admission,
  type AdoptSubmittedParameters,
  type ClaimForBundleParameters,
  type Inclusion,
  type MempoolEntry,
  type MempoolStore,
  type NewMempoolEntry,
  readmissibleStatuses,
  type UserOperationStatus,
  userOperationStatuses,
  type ValidationFacts,
} from "./ports/mempool-store.ts";
export {
  type ReputationEntry,
  type ReputationStore,
  reputationDecayIntervalMs,
} from "./ports/reputation-store.ts";
export {
  createMemoryMempoolStore,
  type MemoryMempoolStoreOptions,
} from "./mempool/memory-mempool-store.ts";
export { createMemoryReputationStore } from "./reputation/memory-reputation-store.ts";
export type {
  Preconfirmation,
  PreconfirmationOutcome,
  PreconfirmationStatus,
  PreconfirmationStore,
} from "./ports/preconfirmation-store.ts";
export { createMemoryPreconfirmationStore } from "./preconfirmation/memory-preconfirmation-store.ts";
export {
  preconfirmationTypedData,
  type PreconfirmationTypedDataParameters,
  preconfirmationTypes,
} from "./preconfirmation/preconfirmation-typed-data.ts";
export { type PreconfirmationSigner, signPreconfirmation } from "./preconfirmation/sign-preconfirmation.ts";
export {
  createPollingBlockSource,
  type CreatePollingBlockSourceParameters,
} from "./chain/polling-block-source.ts";
export { createClassicSubmitter } from "./submit/classic-submitter.ts";
export { createConditionalSubmitter } from "./submit/conditional-submitter.ts";
export { signedTransaction, toSignedTransaction } from "./submit/signed-transaction.ts";
export {
  createConfiguredSubmitter,
  type RelayingMode,
  relayingModes,
  type RelayingSettings,
} from "./submit/configured-submitter.ts";
export type { TrackingSettings } from "./submit/transaction-tracker.ts";
export {
  type ChainFeeOracleOptions,
  createChainFeeOracle,
  type FeeOracle,
  type GasPrice,
} from "./gas/fee-oracle.ts";

// Validation: simulation modes and tracers behind the `Simulator` and `ValidationTracer` ports.
export {
  createSimulator,
  type ValidationSettings,
  validationModes,
  validationTracers,
} from "./validation/create-simulator.ts";
export { createTracingSimulator, createUnsafeSimulator } from "./validation/simulators.ts";
export {
  createInProcessTracer,
  type InProcessTracerParameters,
} from "./validation/tracers/in-process/in-process-tracer.ts";
export { createJsTracer } from "./validation/tracers/js/js-tracer.ts";
export {
  type ValidatedOperation,
  type ValidateContext,
  type ValidationRules,
  validateUserOperation,
} from "./validation/validate-user-operation.ts";
export type { ExecutionResult } from "./validation/simulate.ts";
export type { StakeInfo, ValidationResult } from "./ports/validation-result.ts";
export {
  type CheckValidationRulesParameters,
  checkValidationRules,
  type EntityStakes,
} from "./validation/rules/check-validation-rules.ts";
export { describeViolation, type RuleViolation } from "./validation/rules/rule-violation.ts";
export type {
  CodeKind,
  PhaseTrace,
  SlotAccess,
  StorageAccesses,
  TracedCall,
  TracedCodeAccess,
  TracedCreate,
  ValidationTrace,
} from "./ports/validation-trace.ts";

// Mempool policies and the parts they are built from.
export {
  createDefaultMempoolPolicy,
  type DefaultMempoolPolicyOptions,
} from "./mempool/default-mempool-policy.ts";
export { createFairMempoolPolicy } from "./mempool/fair-mempool-policy.ts";
export { createFifoMempoolPolicy } from "./mempool/fifo-mempool-policy.ts";
export { createProfitMempoolPolicy, effectiveTip } from "./mempool/profit-mempool-policy.ts";
export {
  type MempoolPolicyName,
  mempoolPolicies,
  mempoolPolicyNames,
} from "./mempool/mempool-policies.ts";
export { byArrival, evictLowestValue, fillBudget } from "./mempool/policy-building-blocks.ts";
export { type Erc7562AdmissionOptions, erc7562Admission } from "./mempool/erc7562-admission.ts";

// Reputation and stake (ERC-7562).
export { type Entity, type EntityRole, entitiesOf } from "./userop/entities.ts";
export type {
  Reputation,
  ReputationSettings,
  ReputationReport,
  WhitelistedEntities,
} from "./reputation/reputation.ts";
export { type ReputationStatus, reputationStatus } from "./reputation/reputation-status.ts";
export {
  getStakeStatus,
  isStaked,
  type StakeRequirement,
  type StakeStatus,
} from "./reputation/stake.ts";

// Gas: estimation, preVerificationGas and the L1 data fee of L2s.
export { estimateUserOperationGas, type GasEstimate } from "./gas/estimate-user-operation-gas.ts";
export {
  calculatePreVerificationGas,
  defaultPreVerificationGasConfig,
  type PreVerificationGasConfig,
} from "./userop/pre-verification-gas.ts";
export {
  createArbitrumL1DataCost,
  createOpStackL1DataCost,
  type L1DataCost,
  type L1DataCostName,
  l1DataCosts,
} from "./gas/l1-data-cost.ts";

// User operations and EntryPoints: types, hashing, the wire codec.
export {
  isUserOperationV06,
  type UserOperation,
  type UserOperationV06,
  type UserOperationV07,
} from "./userop/types.ts";
export { getUserOperationHash } from "./userop/hash.ts";
export { readHashDelegate } from "./validation/hash-delegate.ts";
export { maxCostOf } from "./userop/max-cost.ts";
export type { PackedUserOperation } from "./userop/pack.ts";
export {
  type DecodeUserOperationOptions,
  decodeUserOperation,
  deserializeUserOperation,
  encodeUserOperation,
  serializeUserOperation,
  type WireUserOperation,
} from "./userop/codec.ts";
export {
  canonicalEntryPoints,
  type EntryPointVersion,
  entryPointVersions,
} from "./entrypoint/version.ts";
export {
  createEntryPointRegistry,
  defineEntryPoint,
  type EntryPoint,
  type EntryPointRegistry,
} from "./entrypoint/registry.ts";
export { decodeHandleOps } from "./userop/decode-handle-ops.ts";

// Receipts and lookups.
export type { UserOperationLookup, UserOperationReceipt } from "./receipt/lookup.ts";
export {
  decodeUserOperationEvent,
  type RawLog,
  type UserOperationEvent,
  userOperationEventTopic,
} from "./receipt/user-operation-event.ts";

// Errors: domain errors carry facts, not wire codes; `toRpcError` maps them to ERC-7769.
export {
  BundleGasTooLargeError,
  BundlerError,
  BusyError,
  type DomainError,
  type DomainErrorKind,
  DuplicateUserOperationError,
  EntityLimitError,
  type EntryPointRefusal,
  EntryPointRefusalError,
  type EntryPointRefusalFacts,
  EntryPointRejectionError,
  entryPointRefusal,
  ExecutionRevertedError,
  FeeBelowBaseFeeError,
  FieldError,
  GasLimitTooHighError,
  GasPriceTooLowError,
  InfrastructureError,
  InvalidAuthorizationError,
  InvalidParamsError,
  MempoolRejectionError,
  OutOfTimeRangeError,
  PaymasterDepositError,
  type PaymasterDepositShortfall,
  PaymasterRejectionError,
  PreVerificationGasTooLowError,
  PriorityFeeAboveMaxFeeError,
  ProposalNotOpenError,
  ReplacementUnderpricedError,
  ReputationError,
  type RuleViolationDetail,
  RuleViolationError,
  SenderLimitError,
  ShuttingDownError,
  SignatureInvalidError,
  type StakeShortfall,
  StakeTooLowError,
  TraceIncompleteError,
  UnsupportedAggregatorError,
  UnsupportedEntryPointError,
  UserOperationTooLargeError,
  type ValidityWindow,
} from "./errors/errors.ts";
export { entryPointReasons, type FailureEntity, type FailureReason, parseFailureReason } from "./errors/failure-reason.ts";

// JSON-RPC: the transport-agnostic handler, and the parts for methods of your own.
export {
  createRpcHandler,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcResponse,
  type RpcHandler,
  type RpcHandlerOptions,
} from "./rpc/handle-request.ts";
export { expectParams, type RpcMethod, type RpcRequestContext } from "./rpc/methods.ts";
export { ForwardedRpcError, RpcError, RpcErrorCode, rpcErrorOf, toRpcError } from "./rpc/rpc-errors.ts";
export type { AccountOverride, BlockOverride, CallState, StateOverride } from "./ports/eth-call.ts";
export { parseStateOverride } from "./validation/state-override.ts";
export {
  isAbsent,
  parseAddress,
  parseHash,
  parseObject,
  parseQuantity,
  toQuantity,
} from "./userop/wire.ts";
// The results of the ERC-4337 lookups and estimate in their JSON-RPC form, as the endpoint writes them.
export { encodeGasEstimate, encodeUserOperationLookup, encodeUserOperationReceipt } from "./rpc/encode.ts";

// The parts the stand-alone service (@bundlekit/server) assembles beyond the engine: exported for
// the Bundlekit packages, and less settled than the rest.
export { encodePreconfirmation } from "./rpc/encode.ts";
export { bundlerConfigMethod, type BundlerConfigResult, encodeBundlerConfig, type ServiceFacts } from "./rpc/bundler-config.ts";
export { debugMethods } from "./rpc/debug-methods.ts";
export { createRedirectMethods } from "./rpc/redirect.ts";
export { createRequestDrain, type RequestDrain } from "./rpc/request-drain.ts";
export { dummySignature } from "./gas/estimate-user-operation-gas.ts";
export { keccak256Hex } from "./utils/keccak.ts";
export { serializeSigned, serializeTransaction } from "./utils/serialize-transaction.ts";

// Secrets in logs and errors.
export { createRedactor, REDACTED, type Redactor } from "./redaction/redactor.ts";
export { redactUrl, redactUrls, urlSecrets } from "./redaction/redact-urls.ts";
export { redactingLogger } from "./redaction/redacting-logger.ts";
