// The tagged errors are Schema classes, each merged with an interface giving it its domain error's facts.
// biome-ignore-all lint/suspicious/noUnsafeDeclarationMerging: the facts are assigned in `toBundlekitError`
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
 * What every tagged error carries, as Schema fields: the ERC-7769 wire code, the message, and the
 * data object. They are what the error encodes to (e.g. into an `HttpApi` error response); a
 * domain error's facts ride on the instance beside them, typed, and reach the wire in `data`.
 */
const failure = {
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
};
/** The wire code, message and data of a tagged error. */
type Failure = Schema.Struct.Type<typeof failure>;

/** A domain error's facts: its own fields, without `Error`'s and `kind`. */
type Facts<K extends DomainErrorKind> = Omit<
  Extract<DomainError, { kind: K }>,
  keyof Error | "kind"
>;

/** -32602: a request parameter is missing or malformed (`field` names it). */
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", failure) {}
export interface InvalidParams extends Facts<"invalidParams"> {}
/** -32602: the EntryPoint is not one this bundler serves (`supported` lists those it does). */
export class UnsupportedEntryPoint extends Schema.TaggedError<UnsupportedEntryPoint>()(
  "UnsupportedEntryPoint",
  failure,
) {}
export interface UnsupportedEntryPoint extends Facts<"unsupportedEntryPoint"> {}
/** -32602: `maxPriorityFeePerGas` is above `maxFeePerGas`. */
export class PriorityFeeAboveMaxFee extends Schema.TaggedError<PriorityFeeAboveMaxFee>()(
  "PriorityFeeAboveMaxFee",
  failure,
) {}
export interface PriorityFeeAboveMaxFee extends Facts<"priorityFeeAboveMaxFee"> {}
/** -32602: a verification gas limit is above the bundler's `validationGasLimit`. */
export class GasLimitTooHigh extends Schema.TaggedError<GasLimitTooHigh>()(
  "GasLimitTooHigh",
  failure,
) {}
export interface GasLimitTooHigh extends Facts<"gasLimitTooHigh"> {}
/** -32602: the operation is larger than `maxUserOperationSize` bytes (LIM-010). */
export class UserOperationTooLarge extends Schema.TaggedError<UserOperationTooLarge>()(
  "UserOperationTooLarge",
  failure,
) {}
export interface UserOperationTooLarge extends Facts<"userOperationTooLarge"> {}
/** -32602: its gas limits add up to more than a bundle holds. */
export class BundleGasTooLarge extends Schema.TaggedError<BundleGasTooLarge>()(
  "BundleGasTooLarge",
  failure,
) {}
export interface BundleGasTooLarge extends Facts<"bundleGasTooLarge"> {}
/** -32602: `maxFeePerGas` is below the current base fee. */
export class FeeBelowBaseFee extends Schema.TaggedError<FeeBelowBaseFee>()(
  "FeeBelowBaseFee",
  failure,
) {}
export interface FeeBelowBaseFee extends Facts<"feeBelowBaseFee"> {}
/** -32602: a fee is below the network's suggestion less `enforceGasPriceThreshold`. */
export class GasPriceTooLow extends Schema.TaggedError<GasPriceTooLow>()(
  "GasPriceTooLow",
  failure,
) {}
export interface GasPriceTooLow extends Facts<"gasPriceTooLow"> {}
/** -32602: `preVerificationGas` is below what its calldata costs. */
export class PreVerificationGasTooLow extends Schema.TaggedError<PreVerificationGasTooLow>()(
  "PreVerificationGasTooLow",
  failure,
) {}
export interface PreVerificationGasTooLow extends Facts<"preVerificationGasTooLow"> {}
/** -32602: the EIP-7702 authorization cannot delegate the sender here and now. */
export class InvalidAuthorization extends Schema.TaggedError<InvalidAuthorization>()(
  "InvalidAuthorization",
  failure,
) {}
export interface InvalidAuthorization extends Facts<"invalidAuthorization"> {}
/** -32602: no bundle proposal with this id is open. */
export class ProposalNotOpen extends Schema.TaggedError<ProposalNotOpen>()(
  "ProposalNotOpen",
  failure,
) {}
export interface ProposalNotOpen extends Facts<"proposalNotOpen"> {}
/** -32500: the EntryPoint rejected the operation in simulation (an `AA1x`/`AA2x` reason). */
export class EntryPointRejected extends Schema.TaggedError<EntryPointRejected>()(
  "EntryPointRejected",
  failure,
) {}
export interface EntryPointRejected extends Facts<"entryPointRejected"> {}
/** -32501: the paymaster rejected it (`AA3x`). */
export class PaymasterRejected extends Schema.TaggedError<PaymasterRejected>()(
  "PaymasterRejected",
  failure,
) {}
export interface PaymasterRejected extends Facts<"paymasterRejected"> {}
/** -32507: the account's (`AA24`) or the paymaster's (`AA34`) signature is invalid. */
export class SignatureInvalid extends Schema.TaggedError<SignatureInvalid>()(
  "SignatureInvalid",
  failure,
) {}
export interface SignatureInvalid extends Facts<"signatureInvalid"> {}
/** -32503: outside its validity window (`AA22`, `AA32`). */
export class OutOfTimeRange extends Schema.TaggedError<OutOfTimeRange>()(
  "OutOfTimeRange",
  failure,
) {}
export interface OutOfTimeRange extends Facts<"outOfTimeRange"> {}
/** -32508: the paymaster's deposit does not cover it (`AA31`). */
export class PaymasterDepositTooLow extends Schema.TaggedError<PaymasterDepositTooLow>()(
  "PaymasterDepositTooLow",
  failure,
) {}
export interface PaymasterDepositTooLow extends Facts<"paymasterDepositTooLow"> {}
/** -32500: the account or the paymaster needs a signature aggregator, which this bundler does not support. */
export class UnsupportedAggregator extends Schema.TaggedError<UnsupportedAggregator>()(
  "UnsupportedAggregator",
  failure,
) {}
export interface UnsupportedAggregator extends Facts<"unsupportedAggregator"> {}
/** -32521: its execution reverts (estimation), with the revert reason. */
export class ExecutionReverted extends Schema.TaggedError<ExecutionReverted>()(
  "ExecutionReverted",
  failure,
) {}
export interface ExecutionReverted extends Facts<"executionReverted"> {}
/** -32602: the operation is already known. */
export class DuplicateUserOperation extends Schema.TaggedError<DuplicateUserOperation>()(
  "DuplicateUserOperation",
  failure,
) {}
export interface DuplicateUserOperation extends Facts<"duplicateUserOperation"> {}
/** -32602: the mempool policy refused it. */
export class MempoolRejected extends Schema.TaggedError<MempoolRejected>()(
  "MempoolRejected",
  failure,
) {}
export interface MempoolRejected extends Facts<"mempoolRejected"> {}
/** -32602: a replacement without both fees raised enough. */
export class ReplacementUnderpriced extends Schema.TaggedError<ReplacementUnderpriced>()(
  "ReplacementUnderpriced",
  failure,
) {}
export interface ReplacementUnderpriced extends Facts<"replacementUnderpriced"> {}
/** -32504: an entity is throttled or banned. */
export class ThrottledOrBanned extends Schema.TaggedError<ThrottledOrBanned>()(
  "ThrottledOrBanned",
  failure,
) {}
export interface ThrottledOrBanned extends Facts<"throttledOrBanned"> {}
/** -32504: an unstaked sender holds as many operations in the pool as it may (UREP-010). */
export class SenderLimit extends Schema.TaggedError<SenderLimit>()("SenderLimit", failure) {}
export interface SenderLimit extends Facts<"senderLimit"> {}
/** -32504: an unstaked factory or paymaster holds as many operations in the pool as it may (UREP-020). */
export class EntityLimit extends Schema.TaggedError<EntityLimit>()("EntityLimit", failure) {}
export interface EntityLimit extends Facts<"entityLimit"> {}
/** -32502: an ERC-7562 opcode or storage rule was broken. */
export class OpcodeOrStorageRule extends Schema.TaggedError<OpcodeOrStorageRule>()(
  "OpcodeOrStorageRule",
  failure,
) {}
export interface OpcodeOrStorageRule extends Facts<"ruleViolation"> {}
/** -32505: an entity's stake is too low. */
export class StakeTooLow extends Schema.TaggedError<StakeTooLow>()("StakeTooLow", failure) {}
export interface StakeTooLow extends Facts<"stakeTooLow"> {}
/** -32502: the validation read state the node's prestate lacked; refused rather than guessed. */
export class TraceIncomplete extends Schema.TaggedError<TraceIncomplete>()(
  "TraceIncomplete",
  failure,
) {}
export interface TraceIncomplete extends Facts<"traceIncomplete"> {}
/** -32005: the engine is at its cap of concurrent simulations; retry in a moment. */
export class Busy extends Schema.TaggedError<Busy>()("Busy", failure) {}
export interface Busy extends Facts<"busy"> {}
/** -32603: the service is shutting down; retry. */
export class ShuttingDown extends Schema.TaggedError<ShuttingDown>()("ShuttingDown", failure) {}
export interface ShuttingDown extends Facts<"shuttingDown"> {}
/** -32601: the method is not served. */
export class MethodNotFound extends Schema.TaggedError<MethodNotFound>()(
  "MethodNotFound",
  failure,
) {}
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

/** The tag of each domain error, by kind: exhaustive, so a domain error without a tag fails type-check. */
const tags: { [K in DomainErrorKind]: new (failure: Failure) => BundlekitError & Facts<K> } = {
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

/** The facts of a domain error: its own fields, but its name and kind. */
function factsOf(error: BundlerError): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(error).filter(([key]) => key !== "name" && key !== "kind"),
  );
}

/**
 * The tagged error of whatever the Promise API threw: a domain error's own tag, with its facts
 * and its wire code, message and data (`toRpcError`); `InternalError` for anything else.
 */
export function toBundlekitError(error: unknown): BundlekitError {
  if (error instanceof BundlerError) {
    const domain = error as DomainError;
    const Tagged: (new (failure: Failure) => BundlekitError) | undefined = tags[domain.kind];
    const { code, message, data } = toRpcError(domain);
    // The facts are not Schema fields (their wire form is `data`): they go on the instance.
    if (Tagged) return Object.assign(new Tagged({ code, message, data }), factsOf(domain));
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
