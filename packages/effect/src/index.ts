// @bundlekit/effect: the engine as an Effect service, its ports as services with layers.

// The engine.
export { Bundler, type BundlerShape } from "./bundler.ts";

// The JSON-RPC endpoint as routes of Effect's HTTP router.
export { JsonRpcServer, type JsonRpcServerOptions } from "./json-rpc-server.ts";

// HttpApi: the ERC-4337 methods as endpoints built from the schemas.
export {
  BundlerApi,
  BundlerApiGroup,
  BundlerApiHandlers,
  JsonRpcBusyResponse,
  JsonRpcErrorResponse,
  JsonRpcInternalErrorResponse,
  JsonRpcRequestErrors,
  JsonRpcUnavailableResponse,
} from "./http-api.ts";

// Config: the engine's settings from the program's ConfigProvider.
export { type BundlerConfig, bundlerConfig } from "./config.ts";

// Ports as services.
export {
  Blocks,
  BundleSubmitter,
  Chain,
  EngineClock,
  EngineLogger,
  MempoolStorage,
  PoolPolicy,
  PreconfirmationStorage,
  Relayers,
  ReputationStorage,
} from "./ports.ts";
export { memoryStores } from "./stores.ts";
export { effectClock } from "./clock.ts";
export { effectLogger } from "./logger.ts";

// Schema: user operations, the RPC methods' requests and results, between the wire and the domain.
export { UserOperationFromWire, UserOperationSchema } from "./schema.ts";
export {
  AddressSchema,
  ChainIdRequest,
  ChainIdResponse,
  EstimateUserOperationGasRequest,
  EstimateUserOperationGasResponse,
  GasEstimateFromWire,
  GetUserOperationByHashRequest,
  GetUserOperationByHashResponse,
  GetUserOperationReceiptRequest,
  GetUserOperationReceiptResponse,
  HashSchema,
  QuantitySchema,
  RequestId,
  SendUserOperationRequest,
  SendUserOperationResponse,
  SupportedEntryPointsRequest,
  SupportedEntryPointsResponse,
  UserOperationLookupFromWire,
  UserOperationReceiptFromWire,
} from "./rpc-schemas.ts";

// The errors each method can fail with.
export {
  type BundlerMethod,
  type CommitBundleError,
  type EstimateUserOperationGasError,
  type LookupError,
  type MethodError,
  methodErrorTags,
  type ProposeBundleError,
  type ReleaseBundleError,
  type SendBundleNowError,
  type SendUserOperationError,
  toMethodError,
} from "./method-errors.ts";

// Errors: one tagged error per domain error, with its facts and its ERC-7769 code.
export {
  BundleGasTooLarge,
  type BundlekitError,
  BundlekitErrorSchema,
  Busy,
  DuplicateUserOperation,
  EntityLimit,
  EntryPointRejected,
  ExecutionReverted,
  FeeBelowBaseFee,
  GasLimitTooHigh,
  GasPriceTooLow,
  InternalError,
  InvalidAuthorization,
  InvalidParams,
  MempoolRejected,
  MethodNotFound,
  OpcodeOrStorageRule,
  OutOfTimeRange,
  PaymasterDepositTooLow,
  PaymasterRejected,
  PreVerificationGasTooLow,
  PriorityFeeAboveMaxFee,
  ProposalNotOpen,
  ReplacementUnderpriced,
  SenderLimit,
  ShuttingDown,
  SignatureInvalid,
  StakeTooLow,
  ThrottledOrBanned,
  TraceIncomplete,
  toBundlekitError,
  UnsupportedAggregator,
  UnsupportedEntryPoint,
  UserOperationTooLarge,
} from "./errors.ts";
