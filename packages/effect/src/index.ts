// @bundlekit/effect: the engine as an Effect service, its ports as services with layers.

// The engine.
export { BundlerService, type BundlerShape } from "./bundler.ts";

// Ports as services.
export {
  BlockSourceService,
  ChainClientService,
  EngineClockService,
  EngineLoggerService,
  MempoolPolicyService,
  MempoolStoreService,
  RelayerSignerService,
  ReputationStoreService,
  SubmitterService,
} from "./ports.ts";
export { memoryStores, postgresStores, sqliteStores } from "./stores.ts";
export { effectClock } from "./clock.ts";
export { effectLogger } from "./logger.ts";

// Errors: one tagged error per ERC-7769 code.
export {
  type BundlekitError,
  Busy,
  EntryPointRejected,
  ExecutionReverted,
  InternalError,
  InvalidParams,
  MethodNotFound,
  OpcodeOrStorageRule,
  OutOfTimeRange,
  PaymasterDepositTooLow,
  PaymasterRejected,
  SignatureInvalid,
  StakeTooLow,
  ThrottledOrBanned,
  toBundlekitError,
} from "./errors.ts";
