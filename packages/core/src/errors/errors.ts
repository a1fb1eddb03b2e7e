import type { Address } from "viem";
import { type FailureReason, parseFailureReason } from "./failure-reason.ts";

/**
 * JSON-RPC error codes of ERC-7769 plus the JSON-RPC 2.0 base codes. Every error the engine
 * raises carries one of these, so transports map errors to the wire in one place. The engine
 * never raises `sponsorshipRefused`: an ERC-7677 paymaster endpoint answers it when its policy
 * refuses a caller or an operation (ERC-7677 names no code; -32001 is what hosted paymasters
 * such as Coinbase's answer for an unauthorized or policy-denied request). `limitExceeded` is
 * EIP-1474's "limit exceeded", answered when the engine is at its cap of concurrent simulations
 * (ERC-7769 has no code for a busy bundler).
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

/** Base of every error Bundlekit reports to a caller: a short message, a wire code and a data object. */
export class BundlerError extends Error {
  override name = "BundlerError";
  readonly code: RpcErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    code: RpcErrorCode,
    message: string,
    data?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.code = code;
    this.data = data;
  }
}

/** A request parameter is missing or malformed (-32602). `field` is its path, e.g. `params[0].nonce`. */
export class InvalidParamsError extends BundlerError {
  override name = "InvalidParamsError";
  readonly field: string;
  /** `summary` replaces the default "invalid <field>" opening of the message. */
  constructor(field: string, problem: string, summary = `invalid ${field}`) {
    super(RpcErrorCode.invalidParams, `${summary}: ${problem}`, { field, reason: problem });
    this.field = field;
  }
}

/** The EntryPoint named by the request is not one this bundler serves (-32602). */
export class UnsupportedEntryPointError extends BundlerError {
  override name = "UnsupportedEntryPointError";
  constructor(entryPoint: string, supported: readonly Address[]) {
    super(
      RpcErrorCode.invalidParams,
      `unsupported EntryPoint ${entryPoint}; supported: ${supported.join(", ")}`,
      { entryPoint, supported },
    );
  }
}

/**
 * The EntryPoint rejected the operation in simulation, with its `AAxx` reason. The code follows
 * ERC-7769: the paymaster's reasons (AA3x, its signature too) are -32501, the account's signature
 * -32507, time range -32503, an unfunded paymaster deposit -32508, everything else -32500.
 */
export class EntryPointRejectionError extends BundlerError {
  override name = "EntryPointRejectionError";
  readonly reason: string;
  /** The reason parsed once: its `AAxx` code and the entity it blames. */
  readonly failure: FailureReason;
  constructor(reason: string, data: Record<string, unknown> = {}) {
    const failure = parseFailureReason(reason);
    super(rejectionCode(failure), reason, { reason, ...data });
    this.reason = reason;
    this.failure = failure;
  }
}

function rejectionCode({ code, entity }: FailureReason): RpcErrorCode {
  if (code === 24) return RpcErrorCode.signatureInvalid;
  if (code === 22 || code === 32) return RpcErrorCode.outOfTimeRange;
  if (code === 31) return RpcErrorCode.paymasterDepositTooLow;
  if (entity === "paymaster") return RpcErrorCode.paymasterRejected;
  return RpcErrorCode.entryPointRejected;
}

/** The operation's own call reverted while estimating its gas (-32521). */
export class ExecutionRevertedError extends BundlerError {
  override name = "ExecutionRevertedError";
  constructor(revertData: string, reason?: string) {
    super(
      RpcErrorCode.executionReverted,
      reason ? `execution reverted: ${reason}` : "execution reverted",
      { revertData, ...(reason ? { reason } : {}) },
    );
  }
}

/** A mempool rule refused the operation (duplicate, underpriced replacement, …) (-32602). */
export class MempoolRejectionError extends BundlerError {
  override name = "MempoolRejectionError";
  constructor(message: string, data?: Record<string, unknown>) {
    super(RpcErrorCode.invalidParams, message, data);
  }
}

/**
 * An entity of the operation is banned, or throttled with its share of the mempool used up, by
 * ERC-7562 reputation (-32504). `data` names the entity by its role, e.g. `{ paymaster: "0x…" }`.
 */
export class ReputationError extends BundlerError {
  override name = "ReputationError";
  constructor(role: string, address: Address, status: "throttled" | "banned") {
    super(RpcErrorCode.throttledOrBanned, `${role} ${address} is ${status}`, { [role]: address, status });
  }
}

/**
 * The node's own error for a request the service forwarded to it (`redirectRpc`), passed on with
 * the node's code, message and data unchanged.
 */
export class ForwardedRpcError extends BundlerError {
  override name = "ForwardedRpcError";
  constructor(code: number, message: string, data?: unknown) {
    // The node's code and data are relayed as they are; they need not be ERC-7769 values.
    super(code as RpcErrorCode, message, data as Record<string, unknown> | undefined);
  }
}

/** An unstaked sender already has as many operations in the pool as it may (ERC-7562 UREP-010) (-32504). */
export class SenderLimitError extends BundlerError {
  override name = "SenderLimitError";
  constructor(sender: string, limit: number) {
    super(
      RpcErrorCode.throttledOrBanned,
      `sender ${sender} already has ${limit} operations in the mempool, the most an unstaked sender may have; wait for one to be included`,
      { sender, limit },
    );
  }
}

/**
 * An unstaked factory or paymaster already has as many operations in the pool as its inclusion
 * record allows (ERC-7562 UREP-020) (-32504).
 */
export class EntityLimitError extends BundlerError {
  override name = "EntityLimitError";
  constructor(role: string, address: Address, limit: number) {
    super(
      RpcErrorCode.throttledOrBanned,
      `unstaked ${role} ${address} already has ${limit} operations in the mempool, the most its inclusion record allows (UREP-020); wait for some to be included, or stake it`,
      { [role]: address, limit, rule: "UREP-020" },
    );
  }
}

/** A paymaster's deposit cannot cover its operations in the pool and this one at their max cost (-32508). */
export class PaymasterDepositError extends BundlerError {
  override name = "PaymasterDepositError";
  constructor(paymaster: string, deposit: bigint, required: bigint, pooled: number) {
    super(
      RpcErrorCode.paymasterDepositTooLow,
      `paymaster ${paymaster} deposit of ${deposit} wei cannot cover its ${pooled} operation${pooled === 1 ? "" : "s"} in the mempool and this one: they may cost up to ${required} wei`,
      { paymaster, deposit: `0x${deposit.toString(16)}`, required: `0x${required.toString(16)}` },
    );
  }
}

/** The node or another dependency failed; the caller may retry (-32603). */
export class InfrastructureError extends BundlerError {
  override name = "InfrastructureError";
  constructor(message: string, options?: ErrorOptions) {
    super(RpcErrorCode.internalError, message, undefined, options);
  }
}

/**
 * The engine is at its cap of concurrent simulations, with its wait queue full (-32005, EIP-1474
 * "limit exceeded"). Nothing was done: the same request may be sent again shortly.
 */
export class BusyError extends BundlerError {
  override name = "BusyError";
  constructor(running: number, queued: number) {
    super(
      RpcErrorCode.limitExceeded,
      `the bundler is busy: ${running} simulations are running and ${queued} waiting, the most it takes; retry in a moment`,
      { running, queued, retry: true },
    );
  }
}

/**
 * The service is shutting down and could not finish the request within its grace period (-32603).
 * An operation being sent may or may not have been stored: look it up by hash, or send it again.
 */
export class ShuttingDownError extends BundlerError {
  override name = "ShuttingDownError";
  constructor() {
    super(RpcErrorCode.internalError, "the bundler is shutting down and did not finish this request; retry (an operation being sent may already be stored: look it up by hash)", {
      retry: true,
    });
  }
}

/** The store already holds an operation with this hash (-32602). */
export class DuplicateUserOperationError extends BundlerError {
  override name = "DuplicateUserOperationError";
  constructor(userOpHash: string) {
    super(RpcErrorCode.invalidParams, `user operation ${userOpHash} is already known`, { userOpHash });
  }
}

/** One ERC-7562 rule broken, as `RuleViolationError` carries it. */
export interface RuleViolationDetail {
  rule: string;
  entity: string;
  address: Address;
  subject: string;
}

/**
 * The operation's validation broke ERC-7562 rules (-32502). The message names the first
 * violation ("factory 0x… uses banned opcode TIMESTAMP (OP-011)"); `data.violations` lists all.
 */
export class RuleViolationError extends BundlerError {
  override name = "RuleViolationError";
  readonly violations: readonly RuleViolationDetail[];
  constructor(violations: readonly RuleViolationDetail[]) {
    const [first] = violations;
    const more = violations.length > 1 ? `; and ${violations.length - 1} more` : "";
    super(RpcErrorCode.opcodeOrStorageRule, `${first!.entity} ${first!.address} ${first!.subject} (${first!.rule})${more}`, {
      rule: first!.rule,
      [first!.entity]: first!.address,
      violations: violations.map(violationData),
    });
    this.violations = violations;
  }
}

function violationData({ rule, entity, address, subject }: RuleViolationDetail): RuleViolationDetail {
  return { rule, entity, address, subject };
}

/** An entity's stake as the EntryPoint reports it, and the least the bundler counts as staked. */
export interface StakeShortfall {
  entity: string;
  address: Address;
  stake: bigint;
  unstakeDelaySec: bigint;
  minStake: bigint;
  minUnstakeDelay: number;
}

/**
 * The operation broke ERC-7562 rules that a staked entity may break, and the entity has a stake
 * below `minStake` or an unstake delay below `minUnstakeDelay` (-32505). The message names the
 * entity, what is below the minimum and the first violation; `data` carries the entity's address
 * under its role, its `stake` and `unstakeDelaySec`, ERC-7769's `minimumStake` and
 * `minimumUnstakeDelay`, and every violation.
 */
export class StakeTooLowError extends BundlerError {
  override name = "StakeTooLowError";
  readonly violations: readonly RuleViolationDetail[];
  constructor(shortfall: StakeShortfall, violations: readonly RuleViolationDetail[]) {
    const { entity, address, stake, unstakeDelaySec, minStake, minUnstakeDelay } = shortfall;
    const short = [
      ...(stake < minStake ? [`stake ${stake} wei is below the minimum ${minStake} wei`] : []),
      ...(unstakeDelaySec < BigInt(minUnstakeDelay) ? [`unstake delay ${unstakeDelaySec} s is below the minimum ${minUnstakeDelay} s`] : []),
    ];
    const [first] = violations;
    const more = violations.length > 1 ? `; and ${violations.length - 1} more` : "";
    super(RpcErrorCode.stakeTooLow, `${entity} ${address} ${short.join(" and ")}: ${first!.entity} ${first!.address} ${first!.subject} (${first!.rule})${more}`, {
      [entity]: address,
      stake: toHexQuantity(stake),
      unstakeDelaySec: toHexQuantity(unstakeDelaySec),
      minimumStake: toHexQuantity(minStake),
      minimumUnstakeDelay: toHexQuantity(BigInt(minUnstakeDelay)),
      rule: first!.rule,
      violations: violations.map(violationData),
    });
    this.violations = violations;
  }
}

const toHexQuantity = (value: bigint) => `0x${value.toString(16)}`;

/**
 * The validation read state the node's prestate did not include, so its trace cannot be trusted
 * (-32502): the operation is refused, never validated on a guessed value.
 */
export class TraceIncompleteError extends BundlerError {
  override name = "TraceIncompleteError";
  constructor(missing: readonly string[]) {
    super(
      RpcErrorCode.opcodeOrStorageRule,
      `validation read state outside the node's prestate (${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", …" : ""}); refused rather than guessed`,
      { missing: missing.slice(0, 20) },
    );
  }
}
