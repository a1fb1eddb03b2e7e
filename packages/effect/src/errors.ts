import {
  BundlerError,
  type DomainError,
  type DomainErrorKind,
  RpcError,
  RpcErrorCode,
  toRpcError,
} from "@bundlekit/core";
import { Schema } from "effect";

/**
 * What every tagged error carries: the ERC-7769 wire code, the message, and the data object, as
 * `toRpcError` writes them. Each tag adds its domain error's facts as Schema fields of its own.
 */
const failure = {
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
};
/** The wire code, message and data of a tagged error. */
type Failure = Schema.Struct.Type<typeof failure>;

/** A domain error's facts: its own fields, without `Error`'s and `kind`. */
type Facts<K extends DomainErrorKind> = Omit<Extract<DomainError, { kind: K }>, keyof Error | "kind">;

// The facts' schemas: quantities as decimal strings on the wire, addresses, hashes and hex data as `0x…`.
const Wei = Schema.BigIntFromString;
const Hex = Schema.TemplateLiteral(["0x", Schema.String]);
const Entity = Schema.Literals(["factory", "account", "paymaster"]);
/** A field of the request and what is wrong with it (`FieldError`). */
const field = { field: Schema.String, problem: Schema.String };
/** An ERC-7562 rule an entity broke. */
const RuleViolationDetail = Schema.Struct({ rule: Schema.String, entity: Schema.String, address: Hex, subject: Schema.String });
/** The EntryPoint's `FailedOp` reason and what it came with (`EntryPointRefusalError`). */
const refusal = {
  reason: Schema.String,
  failure: Schema.Struct({ code: Schema.optional(Schema.Number), entity: Schema.optional(Entity), text: Schema.String }),
  revertData: Schema.optional(Hex),
  paymaster: Schema.optional(Hex),
  deployedBy: Schema.optional(Hex),
};

/** -32602: a request parameter is missing or malformed (`field` names it). */
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", { ...failure, ...field }) {}
/** -32602: the EntryPoint is not one this bundler serves (`supported` lists those it does). */
export class UnsupportedEntryPoint extends Schema.TaggedError<UnsupportedEntryPoint>()("UnsupportedEntryPoint", {
  ...failure,
  entryPoint: Schema.String,
  supported: Schema.Array(Hex),
}) {}
/** -32602: `maxPriorityFeePerGas` is above `maxFeePerGas`. */
export class PriorityFeeAboveMaxFee extends Schema.TaggedError<PriorityFeeAboveMaxFee>()("PriorityFeeAboveMaxFee", {
  ...failure,
  ...field,
  maxPriorityFeePerGas: Wei,
  maxFeePerGas: Wei,
}) {}
/** -32602: a verification gas limit is above the bundler's `validationGasLimit`. */
export class GasLimitTooHigh extends Schema.TaggedError<GasLimitTooHigh>()("GasLimitTooHigh", { ...failure, ...field, gasLimit: Wei, maxGasLimit: Wei }) {}
/** -32602: the operation is larger than `maxUserOperationSize` bytes (LIM-010). */
export class UserOperationTooLarge extends Schema.TaggedError<UserOperationTooLarge>()("UserOperationTooLarge", {
  ...failure,
  ...field,
  size: Schema.Number,
  maxSize: Schema.Number,
}) {}
/** -32602: its gas limits add up to more than a bundle holds. */
export class BundleGasTooLarge extends Schema.TaggedError<BundleGasTooLarge>()("BundleGasTooLarge", { ...failure, ...field, bundleGas: Wei, maxBundleGas: Wei }) {}
/** -32602: `maxFeePerGas` is below the current base fee. */
export class FeeBelowBaseFee extends Schema.TaggedError<FeeBelowBaseFee>()("FeeBelowBaseFee", { ...failure, ...field, maxFeePerGas: Wei, baseFeePerGas: Wei }) {}
/** -32602: a fee is below the network's suggestion less `enforceGasPriceThreshold`. */
export class GasPriceTooLow extends Schema.TaggedError<GasPriceTooLow>()("GasPriceTooLow", {
  ...failure,
  ...field,
  fee: Wei,
  required: Wei,
  suggestion: Wei,
  thresholdPercent: Schema.Number,
}) {}
/** -32602: `preVerificationGas` is below what its calldata costs. */
export class PreVerificationGasTooLow extends Schema.TaggedError<PreVerificationGasTooLow>()("PreVerificationGasTooLow", {
  ...failure,
  ...field,
  preVerificationGas: Wei,
  required: Wei,
  l1DataGas: Wei,
}) {}
/** -32602: the EIP-7702 authorization cannot delegate the sender here and now. */
export class InvalidAuthorization extends Schema.TaggedError<InvalidAuthorization>()("InvalidAuthorization", { ...failure, ...field }) {}
/** -32602: no bundle proposal with this id is open. */
export class ProposalNotOpen extends Schema.TaggedError<ProposalNotOpen>()("ProposalNotOpen", { ...failure, ...field, id: Schema.String }) {}
/** -32500: the EntryPoint rejected the operation in simulation (an `AA1x`/`AA2x` reason). */
export class EntryPointRejected extends Schema.TaggedError<EntryPointRejected>()("EntryPointRejected", { ...failure, ...refusal }) {}
/** -32501: the paymaster rejected it (`AA3x`). */
export class PaymasterRejected extends Schema.TaggedError<PaymasterRejected>()("PaymasterRejected", { ...failure, ...refusal }) {}
/** -32507: the account's (`AA24`) or the paymaster's (`AA34`) signature is invalid. */
export class SignatureInvalid extends Schema.TaggedError<SignatureInvalid>()("SignatureInvalid", {
  ...failure,
  ...refusal,
  entity: Schema.Literals(["account", "paymaster"]),
}) {}
/** -32503: outside its validity window (`AA22`, `AA32`); `window` holds the bounds and the time or block it was checked at. */
export class OutOfTimeRange extends Schema.TaggedError<OutOfTimeRange>()("OutOfTimeRange", {
  ...failure,
  ...refusal,
  window: Schema.optional(
    Schema.Struct({ validAfter: Wei, validUntil: Wei, unit: Schema.Literals(["seconds", "blocks"]), now: Wei, minValidity: Wei }),
  ),
}) {}
/** -32508: the paymaster's deposit does not cover it (`AA31`); `shortfall` when its operations in the pool take the rest. */
export class PaymasterDepositTooLow extends Schema.TaggedError<PaymasterDepositTooLow>()("PaymasterDepositTooLow", {
  ...failure,
  ...refusal,
  shortfall: Schema.optional(Schema.Struct({ deposit: Wei, required: Wei, pooledOperations: Schema.Number })),
}) {}
/** -32500: the account or the paymaster needs a signature aggregator, which this bundler does not support. */
export class UnsupportedAggregator extends Schema.TaggedError<UnsupportedAggregator>()("UnsupportedAggregator", {
  ...failure,
  entity: Schema.Literals(["account", "paymaster"]),
  aggregator: Hex,
}) {}
/** -32521: its execution reverts (estimation), with the revert reason. */
export class ExecutionReverted extends Schema.TaggedError<ExecutionReverted>()("ExecutionReverted", {
  ...failure,
  revertData: Schema.String,
  reason: Schema.optional(Schema.String),
}) {}
/** -32602: the operation is already known. */
export class DuplicateUserOperation extends Schema.TaggedError<DuplicateUserOperation>()("DuplicateUserOperation", { ...failure, userOpHash: Schema.String }) {}
/** -32602: the mempool policy refused it (`replacing`: the operation it would have replaced). */
export class MempoolRejected extends Schema.TaggedError<MempoolRejected>()("MempoolRejected", { ...failure, replacing: Schema.optional(Hex) }) {}
/** -32602: a replacement without both fees raised enough. */
export class ReplacementUnderpriced extends Schema.TaggedError<ReplacementUnderpriced>()("ReplacementUnderpriced", {
  ...failure,
  replacing: Hex,
  requiredMaxFeePerGas: Wei,
  requiredMaxPriorityFeePerGas: Wei,
}) {}
/** -32504: an entity is throttled or banned. */
export class ThrottledOrBanned extends Schema.TaggedError<ThrottledOrBanned>()("ThrottledOrBanned", {
  ...failure,
  role: Schema.String,
  address: Hex,
  status: Schema.Literals(["throttled", "banned"]),
}) {}
/** -32504: an unstaked sender holds as many operations in the pool as it may (UREP-010). */
export class SenderLimit extends Schema.TaggedError<SenderLimit>()("SenderLimit", { ...failure, sender: Schema.String, limit: Schema.Number }) {}
/** -32504: an unstaked factory or paymaster holds as many operations in the pool as it may (UREP-020). */
export class EntityLimit extends Schema.TaggedError<EntityLimit>()("EntityLimit", { ...failure, role: Schema.String, address: Hex, limit: Schema.Number }) {}
/** -32502: an ERC-7562 opcode or storage rule was broken. */
export class OpcodeOrStorageRule extends Schema.TaggedError<OpcodeOrStorageRule>()("OpcodeOrStorageRule", { ...failure, violations: Schema.Array(RuleViolationDetail) }) {}
/** -32505: an entity's stake is too low for the rules it broke. */
export class StakeTooLow extends Schema.TaggedError<StakeTooLow>()("StakeTooLow", {
  ...failure,
  shortfall: Schema.Struct({ entity: Schema.String, address: Hex, stake: Wei, unstakeDelaySec: Wei, minStake: Wei, minUnstakeDelay: Schema.Number }),
  violations: Schema.Array(RuleViolationDetail),
}) {}
/** -32502: the validation read state the node's prestate lacked; refused rather than guessed. */
export class TraceIncomplete extends Schema.TaggedError<TraceIncomplete>()("TraceIncomplete", { ...failure, missing: Schema.Array(Schema.String) }) {}
/** -32005: the engine is at its cap of concurrent simulations, or waited too long for one; retry after `retryAfterSeconds`. */
export class Busy extends Schema.TaggedError<Busy>()("Busy", {
  ...failure,
  running: Schema.Number,
  queued: Schema.Number,
  waitedMs: Schema.optional(Schema.Number),
  retryAfterSeconds: Schema.Number,
}) {}
/** -32603: the service is shutting down; retry. */
export class ShuttingDown extends Schema.TaggedError<ShuttingDown>()("ShuttingDown", failure) {}
/** -32601: the method is not served. */
export class MethodNotFound extends Schema.TaggedError<MethodNotFound>()("MethodNotFound", failure) {}
/** -32603 and anything else: the node, the store or the engine failed, not the operation. */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", failure) {}

/** Every error the Bundler service fails with: one tag per domain error. */
export type BundlekitError = typeof BundlekitErrorSchema.Type;

/**
 * The Schema of every tagged error (a union by `_tag`): it encodes an error to its tag, wire code,
 * message and data, and decodes that back into the tag's class, e.g. for an `HttpApi` endpoint's
 * `error`.
 */
export const BundlekitErrorSchema = Schema.Union([
  InvalidParams,
  UnsupportedEntryPoint,
  PriorityFeeAboveMaxFee,
  GasLimitTooHigh,
  UserOperationTooLarge,
  BundleGasTooLarge,
  FeeBelowBaseFee,
  GasPriceTooLow,
  PreVerificationGasTooLow,
  InvalidAuthorization,
  ProposalNotOpen,
  EntryPointRejected,
  PaymasterRejected,
  SignatureInvalid,
  OutOfTimeRange,
  PaymasterDepositTooLow,
  UnsupportedAggregator,
  ExecutionReverted,
  DuplicateUserOperation,
  MempoolRejected,
  ReplacementUnderpriced,
  ThrottledOrBanned,
  SenderLimit,
  EntityLimit,
  OpcodeOrStorageRule,
  StakeTooLow,
  TraceIncomplete,
  Busy,
  ShuttingDown,
  MethodNotFound,
  InternalError,
]);

/**
 * The tag of each domain error, by kind: exhaustive, so a domain error without a tag fails
 * type-check, and each tag's schema takes its domain error's facts as they are typed in core.
 */
const tags: { [K in DomainErrorKind]: new (props: Failure & Facts<K>) => BundlekitError } = {
  invalidParams: InvalidParams,
  unsupportedEntryPoint: UnsupportedEntryPoint,
  priorityFeeAboveMaxFee: PriorityFeeAboveMaxFee,
  gasLimitTooHigh: GasLimitTooHigh,
  userOperationTooLarge: UserOperationTooLarge,
  bundleGasTooLarge: BundleGasTooLarge,
  feeBelowBaseFee: FeeBelowBaseFee,
  gasPriceTooLow: GasPriceTooLow,
  preVerificationGasTooLow: PreVerificationGasTooLow,
  invalidAuthorization: InvalidAuthorization,
  proposalNotOpen: ProposalNotOpen,
  entryPointRejected: EntryPointRejected,
  paymasterRejected: PaymasterRejected,
  signatureInvalid: SignatureInvalid,
  outOfTimeRange: OutOfTimeRange,
  paymasterDepositTooLow: PaymasterDepositTooLow,
  unsupportedAggregator: UnsupportedAggregator,
  executionReverted: ExecutionReverted,
  duplicateUserOperation: DuplicateUserOperation,
  mempoolRejected: MempoolRejected,
  replacementUnderpriced: ReplacementUnderpriced,
  throttledOrBanned: ThrottledOrBanned,
  senderLimit: SenderLimit,
  entityLimit: EntityLimit,
  ruleViolation: OpcodeOrStorageRule,
  stakeTooLow: StakeTooLow,
  traceIncomplete: TraceIncomplete,
  infrastructure: InternalError,
  busy: Busy,
  shuttingDown: ShuttingDown,
};

/** The facts of a domain error: its own fields but its name and kind, those it leaves undefined left out. */
function factsOf(error: BundlerError): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(error).filter(([key, value]) => key !== "name" && key !== "kind" && value !== undefined),
  );
}

/**
 * The tagged error of whatever the Promise API threw: a domain error's own tag, with its facts
 * and its wire code, message and data (`toRpcError`); `InternalError` for anything else.
 */
export function toBundlekitError(error: unknown): BundlekitError {
  if (error instanceof BundlerError) {
    const domain = error as DomainError;
    const Tagged = tags[domain.kind] as (new (props: Failure & Record<string, unknown>) => BundlekitError) | undefined;
    const { code, message, data } = toRpcError(domain);
    if (Tagged) return new Tagged({ ...factsOf(domain), code, message, ...(data === undefined ? {} : { data }) });
  }
  if (error instanceof RpcError) {
    const failure = { code: error.code, message: error.message };
    return error.code === RpcErrorCode.methodNotFound
      ? new MethodNotFound(failure)
      : new InternalError(failure);
  }
  return new InternalError({
    code: RpcErrorCode.internalError,
    message: error instanceof Error ? error.message : String(error),
  });
}
