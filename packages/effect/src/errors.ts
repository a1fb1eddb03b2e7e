import { BundlerError, RpcErrorCode } from "@bundlekit/core";
import { Data } from "effect";

/** What every tagged error carries: the ERC-7769 wire code, the message, and the data object. */
interface Failure {
  readonly code: number;
  readonly message: string;
  readonly data?: Record<string, unknown> | undefined;
}

/** -32602: a parameter is malformed or out of range (`data.field` names it when known). */
export class InvalidParams extends Data.TaggedError("InvalidParams")<Failure> {}
/** -32500: the EntryPoint rejected the operation in simulation (an `AA1x`/`AA2x` reason). */
export class EntryPointRejected extends Data.TaggedError("EntryPointRejected")<Failure> {}
/** -32501: the paymaster rejected it (`AA3x`). */
export class PaymasterRejected extends Data.TaggedError("PaymasterRejected")<Failure> {}
/** -32502: an ERC-7562 opcode or storage rule was broken. */
export class OpcodeOrStorageRule extends Data.TaggedError("OpcodeOrStorageRule")<Failure> {}
/** -32503: outside its validity window. */
export class OutOfTimeRange extends Data.TaggedError("OutOfTimeRange")<Failure> {}
/** -32504: an entity is throttled or banned, or the sender holds too many operations. */
export class ThrottledOrBanned extends Data.TaggedError("ThrottledOrBanned")<Failure> {}
/** -32505: an entity's stake is too low. */
export class StakeTooLow extends Data.TaggedError("StakeTooLow")<Failure> {}
/** -32507: the signature is invalid. */
export class SignatureInvalid extends Data.TaggedError("SignatureInvalid")<Failure> {}
/** -32508: the paymaster's deposit does not cover it. */
export class PaymasterDepositTooLow extends Data.TaggedError("PaymasterDepositTooLow")<Failure> {}
/** -32521: its execution reverts (estimation), with the revert reason. */
export class ExecutionReverted extends Data.TaggedError("ExecutionReverted")<Failure> {}
/** -32601: the method is not served. */
export class MethodNotFound extends Data.TaggedError("MethodNotFound")<Failure> {}
/** -32005: the engine is at its cap of concurrent simulations; retry in a moment. */
export class Busy extends Data.TaggedError("Busy")<Failure> {}
/** -32603 and anything else: the node, the store or the engine failed, not the operation. */
export class InternalError extends Data.TaggedError("InternalError")<Failure> {}

/** Every error the Bundler service fails with: one tag per ERC-7769 kind. */
export type BundlekitError =
  | InvalidParams
  | EntryPointRejected
  | PaymasterRejected
  | OpcodeOrStorageRule
  | OutOfTimeRange
  | ThrottledOrBanned
  | StakeTooLow
  | SignatureInvalid
  | PaymasterDepositTooLow
  | ExecutionReverted
  | MethodNotFound
  | Busy
  | InternalError;

const byCode = new Map<number, new (failure: Failure) => BundlekitError>([
  [RpcErrorCode.invalidParams, InvalidParams],
  [RpcErrorCode.entryPointRejected, EntryPointRejected],
  [RpcErrorCode.paymasterRejected, PaymasterRejected],
  [RpcErrorCode.opcodeOrStorageRule, OpcodeOrStorageRule],
  [RpcErrorCode.outOfTimeRange, OutOfTimeRange],
  [RpcErrorCode.throttledOrBanned, ThrottledOrBanned],
  [RpcErrorCode.stakeTooLow, StakeTooLow],
  [RpcErrorCode.signatureInvalid, SignatureInvalid],
  [RpcErrorCode.paymasterDepositTooLow, PaymasterDepositTooLow],
  [RpcErrorCode.executionReverted, ExecutionReverted],
  [RpcErrorCode.methodNotFound, MethodNotFound],
  [RpcErrorCode.limitExceeded, Busy],
]);

/** The tagged error of whatever the Promise API threw: by its wire code, else `InternalError`. */
export function toBundlekitError(error: unknown): BundlekitError {
  if (error instanceof BundlerError) {
    const Tagged = byCode.get(error.code) ?? InternalError;
    return new Tagged({ code: error.code, message: error.message, data: error.data });
  }
  return new InternalError({ code: RpcErrorCode.internalError, message: error instanceof Error ? error.message : String(error) });
}
