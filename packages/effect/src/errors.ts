import {
  BundlerError,
  type DomainError,
  type DomainErrorKind,
  RpcError,
  RpcErrorCode,
  toRpcError,
} from "@bundlekit/core";
import { Data } from "effect";

/** What every tagged error carries besides its facts: the ERC-7769 wire code, the message, and the data object. */
interface Failure {
  readonly code: number;
  readonly message: string;
  readonly data?: Record<string, unknown> | undefined;
}

/** A domain error's facts: its own fields, without `Error`'s and `kind`. */
type Facts<K extends DomainErrorKind> = Omit<
  Extract<DomainError, { kind: K }>,
  keyof Error | "kind"
>;
/** A tag's fields: the facts of domain error `K`, with its wire code, message and data. */
type Fields<K extends DomainErrorKind> = Failure & Facts<K>;

/** -32602: a request parameter is missing or malformed (`field` names it). */
export class InvalidParams extends Data.TaggedError("InvalidParams")<Fields<"invalidParams">> {}
/** -32602: the EntryPoint is not one this bundler serves (`supported` lists those it does). */
export class UnsupportedEntryPoint extends Data.TaggedError("UnsupportedEntryPoint")<
  Fields<"unsupportedEntryPoint">
> {}
/** -32602: `maxPriorityFeePerGas` is above `maxFeePerGas`. */
export class PriorityFeeAboveMaxFee extends Data.TaggedError("PriorityFeeAboveMaxFee")<
  Fields<"priorityFeeAboveMaxFee">
> {}
/** -32602: a verification gas limit is above the bundler's `validationGasLimit`. */
export class GasLimitTooHigh extends Data.TaggedError("GasLimitTooHigh")<
  Fields<"gasLimitTooHigh">
> {}
/** -32602: the operation is larger than `maxUserOperationSize` bytes (LIM-010). */
export class UserOperationTooLarge extends Data.TaggedError("UserOperationTooLarge")<
  Fields<"userOperationTooLarge">
> {}
/** -32602: its gas limits add up to more than a bundle holds. */
export class BundleGasTooLarge extends Data.TaggedError("BundleGasTooLarge")<
  Fields<"bundleGasTooLarge">
> {}
/** -32602: `maxFeePerGas` is below the current base fee. */
export class FeeBelowBaseFee extends Data.TaggedError("FeeBelowBaseFee")<
  Fields<"feeBelowBaseFee">
> {}
/** -32602: a fee is below the network's suggestion less `enforceGasPriceThreshold`. */
export class GasPriceTooLow extends Data.TaggedError("GasPriceTooLow")<Fields<"gasPriceTooLow">> {}
/** -32602: `preVerificationGas` is below what its calldata costs. */
export class PreVerificationGasTooLow extends Data.TaggedError("PreVerificationGasTooLow")<
  Fields<"preVerificationGasTooLow">
> {}
/** -32602: the EIP-7702 authorization cannot delegate the sender here and now. */
export class InvalidAuthorization extends Data.TaggedError("InvalidAuthorization")<
  Fields<"invalidAuthorization">
> {}
/** -32602: no bundle proposal with this id is open. */
export class ProposalNotOpen extends Data.TaggedError("ProposalNotOpen")<
  Fields<"proposalNotOpen">
> {}
/** -32500: the EntryPoint rejected the operation in simulation (an `AA1x`/`AA2x` reason). */
export class EntryPointRejected extends Data.TaggedError("EntryPointRejected")<
  Fields<"entryPointRejected">
> {}
/** -32501: the paymaster rejected it (`AA3x`). */
export class PaymasterRejected extends Data.TaggedError("PaymasterRejected")<
  Fields<"paymasterRejected">
> {}
/** -32507: the account's (`AA24`) or the paymaster's (`AA34`) signature is invalid. */
export class SignatureInvalid extends Data.TaggedError("SignatureInvalid")<
  Fields<"signatureInvalid">
> {}
/** -32503: outside its validity window (`AA22`, `AA32`). */
export class OutOfTimeRange extends Data.TaggedError("OutOfTimeRange")<Fields<"outOfTimeRange">> {}
/** -32508: the paymaster's deposit does not cover it (`AA31`). */
export class PaymasterDepositTooLow extends Data.TaggedError("PaymasterDepositTooLow")<
  Fields<"paymasterDepositTooLow">
> {}
/** -32500: the account or the paymaster needs a signature aggregator, which this bundler does not support. */
export class UnsupportedAggregator extends Data.TaggedError("UnsupportedAggregator")<
  Fields<"unsupportedAggregator">
> {}
/** -32521: its execution reverts (estimation), with the revert reason. */
export class ExecutionReverted extends Data.TaggedError("ExecutionReverted")<
  Fields<"executionReverted">
> {}
/** -32602: the operation is already known. */
export class DuplicateUserOperation extends Data.TaggedError("DuplicateUserOperation")<
  Fields<"duplicateUserOperation">
> {}
/** -32602: the mempool policy refused it. */
export class MempoolRejected extends Data.TaggedError("MempoolRejected")<
  Fields<"mempoolRejected">
> {}
/** -32602: a replacement without both fees raised enough. */
export class ReplacementUnderpriced extends Data.TaggedError("ReplacementUnderpriced")<
  Fields<"replacementUnderpriced">
> {}
/** -32504: an entity is throttled or banned. */
export class ThrottledOrBanned extends Data.TaggedError("ThrottledOrBanned")<
  Fields<"throttledOrBanned">
> {}
/** -32504: an unstaked sender holds as many operations in the pool as it may (UREP-010). */
export class SenderLimit extends Data.TaggedError("SenderLimit")<Fields<"senderLimit">> {}
/** -32504: an unstaked factory or paymaster holds as many operations in the pool as it may (UREP-020). */
export class EntityLimit extends Data.TaggedError("EntityLimit")<Fields<"entityLimit">> {}
/** -32502: an ERC-7562 opcode or storage rule was broken. */
export class OpcodeOrStorageRule extends Data.TaggedError("OpcodeOrStorageRule")<
  Fields<"ruleViolation">
> {}
/** -32505: an entity's stake is too low. */
export class StakeTooLow extends Data.TaggedError("StakeTooLow")<Fields<"stakeTooLow">> {}
/** -32502: the validation read state the node's prestate lacked; refused rather than guessed. */
export class TraceIncomplete extends Data.TaggedError("TraceIncomplete")<
  Fields<"traceIncomplete">
> {}
/** -32005: the engine is at its cap of concurrent simulations; retry in a moment. */
export class Busy extends Data.TaggedError("Busy")<Fields<"busy">> {}
/** -32603: the service is shutting down; retry. */
export class ShuttingDown extends Data.TaggedError("ShuttingDown")<Fields<"shuttingDown">> {}
/** -32601: the method is not served. */
export class MethodNotFound extends Data.TaggedError("MethodNotFound")<Failure> {}
/** -32603 and anything else: the node, the store or the engine failed, not the operation. */
export class InternalError extends Data.TaggedError("InternalError")<Failure> {}

/** Every error the Bundler service fails with: one tag per domain error. */
export type BundlekitError =
  | InvalidParams
  | UnsupportedEntryPoint
  | PriorityFeeAboveMaxFee
  | GasLimitTooHigh
  | UserOperationTooLarge
  | BundleGasTooLarge
  | FeeBelowBaseFee
  | GasPriceTooLow
  | PreVerificationGasTooLow
  | InvalidAuthorization
  | ProposalNotOpen
  | EntryPointRejected
  | PaymasterRejected
  | SignatureInvalid
  | OutOfTimeRange
  | PaymasterDepositTooLow
  | UnsupportedAggregator
  | ExecutionReverted
  | DuplicateUserOperation
  | MempoolRejected
  | ReplacementUnderpriced
  | ThrottledOrBanned
  | SenderLimit
  | EntityLimit
  | OpcodeOrStorageRule
  | StakeTooLow
  | TraceIncomplete
  | Busy
  | ShuttingDown
  | MethodNotFound
  | InternalError;

/** The tag of each domain error, by kind: exhaustive, so a domain error without a tag fails type-check. */
const tags: { [K in DomainErrorKind]: new (fields: Fields<K>) => BundlekitError } = {
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
    const Tagged = tags[domain.kind] as
      | (new (
          fields: Failure & Record<string, unknown>,
        ) => BundlekitError)
      | undefined;
    const { code, message, data } = toRpcError(domain);
    if (Tagged) return new Tagged({ ...factsOf(domain), code, message, data });
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
