import {
  BundlerError,
  type DomainError,
  type DomainErrorKind,
  type EntryPointRefusalError,
  type FieldError,
  type RuleViolationDetail,
} from "../errors/errors.ts";

/**
 * JSON-RPC error codes of ERC-7769 plus the JSON-RPC 2.0 base codes. `toRpcError` gives every
 * domain error one of these. The engine never raises `sponsorshipRefused`: an ERC-7677 paymaster
 * endpoint answers it when its policy refuses a caller or an operation (ERC-7677 names no code;
 * -32001 is what hosted paymasters such as Coinbase's answer for an unauthorized or
 * policy-denied request). `limitExceeded` is EIP-1474's "limit exceeded", answered when the
 * engine is at its cap of concurrent simulations (ERC-7769 has no code for a busy bundler).
 */
export const RpcErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  entryPointRejected: -32500,
  paymasterRejected: -32501,
  opcodeOrStorageRule: -32502,
  outOfTimeRange: -32503,
  throttledOrBanned: -32504,
  stakeTooLow: -32505,
  signatureInvalid: -32507,
  paymasterDepositTooLow: -32508,
  executionReverted: -32521,
  sponsorshipRefused: -32001,
  limitExceeded: -32005,
} as const;

export type RpcErrorCode = (typeof RpcErrorCode)[keyof typeof RpcErrorCode];

/**
 * A JSON-RPC error as it goes on the wire: code, message and data. `toRpcError` makes one of a
 * domain error; transports and methods of the service's own throw one directly for failures
 * that are the protocol's, not the engine's (a closed connection, a method only served over
 * WebSocket, a sponsorship refused).
 */
export class RpcError<Data = unknown> extends Error {
  override name = "RpcError";
  readonly code: number;
  readonly data: Data | undefined;
  constructor(code: number, message: string, data?: Data, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.data = data;
  }
}

/**
 * The node's own error for a request the service forwarded to it (`redirectRpc`), passed on with
 * the node's code, message and data unchanged; they need not be ERC-7769 values.
 */
export class ForwardedRpcError extends RpcError {
  override name = "ForwardedRpcError";
}

/** The `data` object of a domain error's answer. */
type ErrorData = Record<string, unknown>;
/** A domain error's code and data; the message is the error's own. */
type Wire = { code: RpcErrorCode; data?: ErrorData | undefined };

const hex = (value: bigint) => `0x${value.toString(16)}`;

const field = (error: FieldError): Wire => ({
  code: RpcErrorCode.invalidParams,
  data: { field: error.field, reason: error.problem },
});

/** What ERC-7769 asks of a refusal in the EntryPoint's terms: its reason, and what failed. */
function refusal(
  code: RpcErrorCode,
  error: EntryPointRefusalError,
  { namingPaymaster = false } = {},
): Wire {
  return {
    code,
    data: {
      reason: error.reason,
      ...(error.revertData !== undefined ? { revertData: error.revertData } : {}),
      ...(error.deployedBy !== undefined ? { deployedBy: error.deployedBy } : {}),
      ...(namingPaymaster && error.paymaster !== undefined ? { paymaster: error.paymaster } : {}),
    },
  };
}

const violations = (list: readonly RuleViolationDetail[]) =>
  list.map(({ rule, entity, address, subject }) => ({ rule, entity, address, subject }));

/**
 * Every domain error's ERC-7769 code and data, by kind. Exhaustive: a domain error without an
 * entry here fails type-check.
 */
const wire: { [K in DomainErrorKind]: (error: Extract<DomainError, { kind: K }>) => Wire } = {
  invalidParams: field,
  priorityFeeAboveMaxFee: field,
  gasLimitTooHigh: field,
  userOperationTooLarge: field,
  bundleGasTooLarge: field,
  feeBelowBaseFee: field,
  gasPriceTooLow: field,
  preVerificationGasTooLow: field,
  invalidAuthorization: field,
  proposalNotOpen: field,
  unsupportedEntryPoint: (e) => ({
    code: RpcErrorCode.invalidParams,
    data: { entryPoint: e.entryPoint, supported: e.supported },
  }),
  entryPointRejected: (e) => refusal(RpcErrorCode.entryPointRejected, e),
  // ERC-7769: a rejection by the paymaster (-32501) names it in `data`.
  paymasterRejected: (e) => refusal(RpcErrorCode.paymasterRejected, e, { namingPaymaster: true }),
  // ERC-7769 -32507: "wallet signature check failed (or paymaster signature, if the paymaster
  // uses its data as signature)": AA34 too, naming the paymaster as -32501 did.
  signatureInvalid: (e) => refusal(RpcErrorCode.signatureInvalid, e, { namingPaymaster: true }),
  outOfTimeRange: (e) =>
    e.window
      ? {
          code: RpcErrorCode.outOfTimeRange,
          data: {
            ...(e.window.unit === "blocks"
              ? { validUntilBlock: hex(e.window.validUntil), validAfterBlock: hex(e.window.validAfter) }
              : { validUntil: hex(e.window.validUntil), validAfter: hex(e.window.validAfter) }),
            ...(e.paymaster !== undefined ? { paymaster: e.paymaster } : {}),
          },
        }
      : refusal(RpcErrorCode.outOfTimeRange, e),
  paymasterDepositTooLow: (e) =>
    e.shortfall
      ? {
          code: RpcErrorCode.paymasterDepositTooLow,
          data: {
            paymaster: e.paymaster,
            deposit: hex(e.shortfall.deposit),
            required: hex(e.shortfall.required),
          },
        }
      : refusal(RpcErrorCode.paymasterDepositTooLow, e),
  unsupportedAggregator: (e) => ({
    code: RpcErrorCode.entryPointRejected,
    data: { aggregator: e.aggregator },
  }),
  executionReverted: (e) => ({
    code: RpcErrorCode.executionReverted,
    data: { revertData: e.revertData, ...(e.reason ? { reason: e.reason } : {}) },
  }),
  duplicateUserOperation: (e) => ({
    code: RpcErrorCode.invalidParams,
    data: { userOpHash: e.userOpHash },
  }),
  mempoolRejected: (e) => ({
    code: RpcErrorCode.invalidParams,
    data: e.replacing !== undefined ? { replacing: e.replacing } : undefined,
  }),
  replacementUnderpriced: (e) => ({
    code: RpcErrorCode.invalidParams,
    data: { replacing: e.replacing },
  }),
  throttledOrBanned: (e) => ({
    code: RpcErrorCode.throttledOrBanned,
    data: { [e.role]: e.address, status: e.status },
  }),
  senderLimit: (e) => ({
    code: RpcErrorCode.throttledOrBanned,
    data: { sender: e.sender, limit: e.limit },
  }),
  entityLimit: (e) => ({
    code: RpcErrorCode.throttledOrBanned,
    data: { [e.role]: e.address, limit: e.limit, rule: "UREP-020" },
  }),
  ruleViolation: (e) => {
    const [first] = e.violations;
    return {
      code: RpcErrorCode.opcodeOrStorageRule,
      data: {
        rule: first!.rule,
        [first!.entity]: first!.address,
        violations: violations(e.violations),
      },
    };
  },
  stakeTooLow: (e) => {
    const { entity, address, stake, unstakeDelaySec, minStake, minUnstakeDelay } = e.shortfall;
    return {
      code: RpcErrorCode.stakeTooLow,
      data: {
        [entity]: address,
        stake: hex(stake),
        unstakeDelaySec: hex(unstakeDelaySec),
        minimumStake: hex(minStake),
        minimumUnstakeDelay: hex(BigInt(minUnstakeDelay)),
        rule: e.violations[0]!.rule,
        violations: violations(e.violations),
      },
    };
  },
  traceIncomplete: (e) => ({
    code: RpcErrorCode.opcodeOrStorageRule,
    data: { missing: e.missing.slice(0, 20) },
  }),
  infrastructure: () => ({ code: RpcErrorCode.internalError }),
  busy: (e) => ({
    code: RpcErrorCode.limitExceeded,
    data: { running: e.running, queued: e.queued, retry: true, retryAfter: e.retryAfterSeconds },
  }),
  shuttingDown: () => ({ code: RpcErrorCode.internalError, data: { retry: true } }),
};

/**
 * The JSON-RPC error a domain error answers: its ERC-7769 code, its message, and a `data` object
 * that says what was wrong (the facts ERC-7769 asks for, e.g. `paymaster` for -32501, the
 * validity window for -32503). The one place the engine's failures meet wire codes: the RPC
 * handler, the transports and the Effect face all answer through it.
 */
export function toRpcError(error: DomainError): RpcError<Record<string, unknown>> {
  const answer = wire[error.kind] as ((error: DomainError) => Wire) | undefined;
  if (!answer)
    return new RpcError<ErrorData>(RpcErrorCode.internalError, error.message, undefined, {
      cause: error,
    });
  const { code, data } = answer(error);
  return new RpcError<ErrorData>(code, error.message, data, { cause: error });
}

/**
 * What `error` answers on the wire: an `RpcError` as it is, a domain error through `toRpcError`;
 * undefined for anything else (a fault, answered as "internal error" without its text).
 */
export function rpcErrorOf(error: unknown): RpcError | undefined {
  if (error instanceof RpcError) return error;
  // A `BundlerError` subclass of an embedder's own, outside `DomainError`, answers -32603 with its message.
  if (error instanceof BundlerError) return toRpcError(error as DomainError);
  return undefined;
}
