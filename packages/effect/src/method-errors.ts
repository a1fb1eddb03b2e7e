import { RpcErrorCode } from "@bundlekit/core";
import { type BundlekitError, InternalError, toBundlekitError } from "./errors.ts";

/** The tags of the EntryPoint's refusals in simulation (`AA1x`–`AA3x`), raised wherever the engine simulates validation. */
const simulationRefusals = ["EntryPointRejected", "PaymasterRejected", "SignatureInvalid", "OutOfTimeRange", "PaymasterDepositTooLow"] as const;

/**
 * The tags each method of the `Bundler` service can fail with: the domain errors the engine can
 * raise on that path, and `InternalError` (the node, the store, the engine). Nothing else reaches
 * the method's error channel: a tag outside its list becomes `InternalError`. The lists are
 * checked against the engine's code (`test/method-errors.test.ts` reads which errors each method's
 * path creates), so they cannot drift from it.
 */
export const methodErrorTags = {
  sendUserOperation: [
    "InvalidParams",
    "UnsupportedEntryPoint",
    "PriorityFeeAboveMaxFee",
    "GasLimitTooHigh",
    "UserOperationTooLarge",
    "BundleGasTooLarge",
    "FeeBelowBaseFee",
    "GasPriceTooLow",
    "PreVerificationGasTooLow",
    "InvalidAuthorization",
    ...simulationRefusals,
    "UnsupportedAggregator",
    "DuplicateUserOperation",
    "MempoolRejected",
    "ReplacementUnderpriced",
    "ThrottledOrBanned",
    "SenderLimit",
    "EntityLimit",
    "OpcodeOrStorageRule",
    "StakeTooLow",
    "TraceIncomplete",
    "Busy",
    "InternalError",
  ],
  estimateUserOperationGas: [
    "UnsupportedEntryPoint",
    "UserOperationTooLarge",
    "InvalidAuthorization",
    ...simulationRefusals,
    "ExecutionReverted",
    "Busy",
    "InternalError",
  ],
  getUserOperationByHash: ["InternalError"],
  getUserOperationReceipt: ["InternalError"],
  sendBundleNow: ["InternalError"],
  proposeBundle: ["UnsupportedEntryPoint", "InternalError"],
  commitBundle: ["ProposalNotOpen", "InvalidParams", "InternalError"],
  releaseBundle: ["ProposalNotOpen", "InternalError"],
} as const satisfies Record<string, readonly BundlekitError["_tag"][]>;

/** A method of the `Bundler` service. */
export type BundlerMethod = keyof typeof methodErrorTags;

/** The error of one method: the union of its tags (e.g. `MethodError<"getUserOperationReceipt">` is `InternalError`). */
export type MethodError<M extends BundlerMethod> = Extract<BundlekitError, { readonly _tag: (typeof methodErrorTags)[M][number] }>;

/** `sendUserOperation`'s errors: every refusal of admission, `Busy`, `InternalError`. */
export type SendUserOperationError = MethodError<"sendUserOperation">;
/** `estimateUserOperationGas`'s errors: an EntryPoint not served, size and authorization, the EntryPoint's refusals, `ExecutionReverted`, `Busy`, `InternalError`. */
export type EstimateUserOperationGasError = MethodError<"estimateUserOperationGas">;
/** The lookups' errors (`getUserOperationByHash`, `getUserOperationReceipt`): only `InternalError`. */
export type LookupError = MethodError<"getUserOperationReceipt">;
/** `sendBundleNow`'s errors: only `InternalError`. */
export type SendBundleNowError = MethodError<"sendBundleNow">;
/** `proposeBundle`'s errors: an EntryPoint not served, `InternalError`. */
export type ProposeBundleError = MethodError<"proposeBundle">;
/** `commitBundle`'s errors: no such open proposal, a transaction hash it cannot take, `InternalError`. */
export type CommitBundleError = MethodError<"commitBundle">;
/** `releaseBundle`'s errors: no such open proposal, `InternalError`. */
export type ReleaseBundleError = MethodError<"releaseBundle">;

/**
 * The tagged error of what method `method` of the Promise API threw, narrowed to the method's tags:
 * a domain error the method is not known to raise is kept as `InternalError` with its message.
 */
export function toMethodError<M extends BundlerMethod>(method: M, error: unknown): MethodError<M> | InternalError {
  const tagged = toBundlekitError(error);
  const allowed: readonly string[] = methodErrorTags[method];
  const isAllowed = (candidate: BundlekitError): candidate is MethodError<M> => allowed.includes(candidate._tag);
  return isAllowed(tagged) ? tagged : new InternalError({ code: RpcErrorCode.internalError, message: tagged.message });
}
