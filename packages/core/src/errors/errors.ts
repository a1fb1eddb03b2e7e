import type { Address, Hash, Hex } from "viem";
import {
  entryPointReasons,
  type FailureEntity,
  type FailureReason,
  parseFailureReason,
} from "./failure-reason.ts";

/**
 * Base of every domain error the engine raises. Each carries a readonly `kind` that tells it
 * apart, and its facts as typed readonly fields; none carries a wire code. `toRpcError`
 * (`rpc/rpc-errors.ts`) maps every kind to its ERC-7769 code, message and data, in one place.
 * `DomainError` is the union of the kinds: a class whose kind is not in it fails type-check.
 */
export abstract class BundlerError extends Error {
  abstract readonly kind: DomainErrorKind;
}

/**
 * A field of a request or of the operation the engine refuses: which field and what is wrong
 * with it. The message reads "<summary>: <problem>", the summary by default "invalid <field>".
 * On the wire: -32602, `data: { field, reason }`.
 */
export abstract class FieldError extends BundlerError {
  /** The field's path, e.g. `params[0].nonce`, `maxFeePerGas`. */
  readonly field: string;
  /** What is wrong with it, e.g. "is higher than maxFeePerGas". */
  readonly problem: string;
  constructor(field: string, problem: string, summary = `invalid ${field}`) {
    super(`${summary}: ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

/** A request parameter is missing or malformed. `field` is its path, e.g. `params[0].nonce`. */
export class InvalidParamsError extends FieldError {
  override readonly kind = "invalidParams";
  override name = "InvalidParamsError";
}

/** The EntryPoint named by the request is not one this bundler serves. */
export class UnsupportedEntryPointError extends BundlerError {
  override readonly kind = "unsupportedEntryPoint";
  override name = "UnsupportedEntryPointError";
  readonly entryPoint: string;
  readonly supported: readonly Address[];
  constructor(entryPoint: string, supported: readonly Address[]) {
    super(`EntryPoint ${entryPoint} not supported; supported: ${supported.join(", ")}`);
    this.entryPoint = entryPoint;
    this.supported = supported;
  }
}

/** An operation's `maxPriorityFeePerGas` is above its `maxFeePerGas`. */
export class PriorityFeeAboveMaxFeeError extends FieldError {
  override readonly kind = "priorityFeeAboveMaxFee";
  override name = "PriorityFeeAboveMaxFeeError";
  readonly maxPriorityFeePerGas: bigint;
  readonly maxFeePerGas: bigint;
  constructor(maxPriorityFeePerGas: bigint, maxFeePerGas: bigint) {
    super("maxPriorityFeePerGas", "is higher than maxFeePerGas");
    this.maxPriorityFeePerGas = maxPriorityFeePerGas;
    this.maxFeePerGas = maxFeePerGas;
  }
}

/** A gas limit of the operation is above the most the bundler takes (`validationGasLimit`). */
export class GasLimitTooHighError extends FieldError {
  override readonly kind = "gasLimitTooHigh";
  override name = "GasLimitTooHighError";
  readonly gasLimit: bigint;
  readonly maxGasLimit: bigint;
  constructor(
    field: "verificationGasLimit" | "paymasterVerificationGasLimit",
    gasLimit: bigint,
    maxGasLimit: bigint,
  ) {
    super(field, `${gasLimit} is above the bundler's limit of ${maxGasLimit}`);
    this.gasLimit = gasLimit;
    this.maxGasLimit = maxGasLimit;
  }
}

/** The operation ABI-encoded is larger than `maxUserOperationSize` bytes (ERC-7562 LIM-010). */
export class UserOperationTooLargeError extends FieldError {
  override readonly kind = "userOperationTooLarge";
  override name = "UserOperationTooLargeError";
  readonly size: number;
  readonly maxSize: number;
  constructor(size: number, maxSize: number) {
    super(
      "userOperation",
      `the operation is ${size} bytes ABI-encoded, above the limit of ${maxSize} bytes (LIM-010)`,
      "user operation too large",
    );
    this.size = size;
    this.maxSize = maxSize;
  }
}

/** The operation's gas limits add up to more than one bundle holds (`maxBundleGas`): it could never be bundled. */
export class BundleGasTooLargeError extends FieldError {
  override readonly kind = "bundleGasTooLarge";
  override name = "BundleGasTooLargeError";
  readonly bundleGas: bigint;
  readonly maxBundleGas: bigint;
  constructor(bundleGas: bigint, maxBundleGas: bigint) {
    super(
      "gas limits",
      `the operation's gas limits add up to ${bundleGas} gas in a bundle, above maxBundleGas ${maxBundleGas}; it could never be bundled`,
    );
    this.bundleGas = bundleGas;
    this.maxBundleGas = maxBundleGas;
  }
}

/** The operation's `maxFeePerGas` is below the chain's current base fee: it could not be bundled now. */
export class FeeBelowBaseFeeError extends FieldError {
  override readonly kind = "feeBelowBaseFee";
  override name = "FeeBelowBaseFeeError";
  readonly maxFeePerGas: bigint;
  readonly baseFeePerGas: bigint;
  constructor(maxFeePerGas: bigint, baseFeePerGas: bigint) {
    super("maxFeePerGas", `${maxFeePerGas} is below the current base fee ${baseFeePerGas}`);
    this.maxFeePerGas = maxFeePerGas;
    this.baseFeePerGas = baseFeePerGas;
  }
}

/**
 * `enforceGasPrice`: a fee of the operation is below the network's suggestion less
 * `enforceGasPriceThreshold` percent.
 */
export class GasPriceTooLowError extends FieldError {
  override readonly kind = "gasPriceTooLow";
  override name = "GasPriceTooLowError";
  readonly fee: bigint;
  /** The least the bundler takes: `suggestion` less `thresholdPercent` percent. */
  readonly required: bigint;
  readonly suggestion: bigint;
  readonly thresholdPercent: number;
  constructor(
    field: "maxFeePerGas" | "maxPriorityFeePerGas",
    fee: bigint,
    required: bigint,
    suggestion: bigint,
    thresholdPercent: number,
  ) {
    super(
      field,
      `${fee} is below the required minimum of ${required} wei (the network's suggestion ${suggestion} less enforceGasPriceThreshold ${thresholdPercent}%)`,
    );
    this.fee = fee;
    this.required = required;
    this.suggestion = suggestion;
    this.thresholdPercent = thresholdPercent;
  }
}

/**
 * `preVerificationGas` is below what the operation's calldata costs (with the L1 data fee on an
 * L2): the bundler would pay the difference.
 */
export class PreVerificationGasTooLowError extends FieldError {
  override readonly kind = "preVerificationGasTooLow";
  override name = "PreVerificationGasTooLowError";
  readonly preVerificationGas: bigint;
  readonly required: bigint;
  /** The part of `required` for the L1 data fee; 0 on L1. */
  readonly l1DataGas: bigint;
  constructor(preVerificationGas: bigint, required: bigint, l1DataGas: bigint) {
    const l1Part = l1DataGas > 0n ? ` (${l1DataGas} of it for the L1 data fee)` : "";
    super(
      "preVerificationGas",
      `too low: expected at least ${required}${l1Part}, provided only ${preVerificationGas}`,
    );
    this.preVerificationGas = preVerificationGas;
    this.required = required;
    this.l1DataGas = l1DataGas;
  }
}

/**
 * The operation's EIP-7702 authorization cannot delegate its sender here and now (a high `s`,
 * another chain, another signer, another nonce): the chain would skip it. `field` names the part.
 */
export class InvalidAuthorizationError extends FieldError {
  override readonly kind = "invalidAuthorization";
  override name = "InvalidAuthorizationError";
}

/** No bundle proposal with this id is open: unknown, already committed or released, or lapsed. */
export class ProposalNotOpenError extends FieldError {
  override readonly kind = "proposalNotOpen";
  override name = "ProposalNotOpenError";
  readonly id: string;
  constructor(id: string) {
    super(
      "id",
      `no bundle proposal ${id} is open: unknown, already committed or released, or lapsed`,
    );
    this.id = id;
  }
}

/** What an EntryPoint refusal may name besides its reason. */
export interface EntryPointRefusalFacts {
  /** The revert data the EntryPoint wrapped (`FailedOpWithRevert`), or the whole revert when it was no `FailedOp`. */
  revertData?: Hex | undefined;
  /** The operation's paymaster, when the refusal is the paymaster's (an `AA3x` reason). */
  paymaster?: Address | undefined;
  /** The pooled operation that deploys the sender, when factory data is redundant (AA10). */
  deployedBy?: Hash | undefined;
}

/**
 * Base of the refusals in the EntryPoint's own terms: a `FailedOp` of its simulation, or a check
 * the engine makes on its result that `handleOps` would fail with the same `AAxx` reason. The
 * message is the reason: the EntryPoint's text, any detail after it.
 * `entryPointRefusal(reason)` picks the kind from the `AAxx` code.
 */
export abstract class EntryPointRefusalError extends BundlerError {
  /** The reason as reported: the EntryPoint's `AAxx` text, with any detail after ": ". */
  readonly reason: string;
  /** The reason parsed: its `AAxx` code and the entity it blames. */
  readonly failure: FailureReason;
  readonly revertData: Hex | undefined;
  readonly paymaster: Address | undefined;
  readonly deployedBy: Hash | undefined;
  constructor(reason: string, facts: EntryPointRefusalFacts = {}) {
    super(reason);
    this.reason = reason;
    this.failure = parseFailureReason(reason);
    this.revertData = facts.revertData;
    this.paymaster = facts.paymaster;
    this.deployedBy = facts.deployedBy;
  }
}

/** The EntryPoint rejected the operation in simulation (an `AA1x`, `AA2x` or `AA9x` reason, or a revert that is no `FailedOp`). */
export class EntryPointRejectionError extends EntryPointRefusalError {
  override readonly kind = "entryPointRejected";
  override name = "EntryPointRejectionError";
}

/** The paymaster's validation failed (an `AA3x` reason other than its deposit, window or signature). */
export class PaymasterRejectionError extends EntryPointRefusalError {
  override readonly kind = "paymasterRejected";
  override name = "PaymasterRejectionError";
}

/** The account's (`AA24`) or the paymaster's (`AA34`) signature check failed. */
export class SignatureInvalidError extends EntryPointRefusalError {
  override readonly kind = "signatureInvalid";
  override name = "SignatureInvalidError";
  /** Whose signature failed: the paymaster's for AA34, else the account's. */
  readonly entity: "account" | "paymaster";
  constructor(reason: string, facts: EntryPointRefusalFacts = {}) {
    super(reason, facts);
    this.entity = this.failure.code === 34 ? "paymaster" : "account";
  }
}

/**
 * The validity window the account or the paymaster returned, against the engine's clock: in
 * seconds (a timestamp window), or in block numbers (v0.9's block ranges, which the EntryPoint
 * accepts in blocks `validAfter + 1` to `validUntil`).
 */
export interface ValidityWindow {
  validAfter: bigint;
  validUntil: bigint;
  unit: "seconds" | "blocks";
  /** When it was checked: seconds since the epoch, or the next block's number. */
  now: bigint;
  /** The least an operation must stay valid to be worth bundling, in the window's unit. */
  minValidity: bigint;
}

/**
 * The account's (`AA22`) or the paymaster's (`AA32`) validity window does not hold the operation
 * long enough to be bundled: expired, not yet due, or ending within `minValidity`. `window` holds
 * the bounds when the engine checked them; absent when the EntryPoint refused.
 */
export class OutOfTimeRangeError extends EntryPointRefusalError {
  override readonly kind = "outOfTimeRange";
  override name = "OutOfTimeRangeError";
  readonly window: ValidityWindow | undefined;
  constructor(
    reason: string,
    facts: EntryPointRefusalFacts & { window?: ValidityWindow | undefined } = {},
  ) {
    super(reason, facts);
    this.window = facts.window;
  }

  /**
   * The refusal of `window`, whose entity it is, or undefined when it holds the operation for at
   * least `minValidity`. The message is the EntryPoint's own text (AA22 for the account, AA32 for
   * the paymaster), then which bound fails.
   */
  static check(
    entity: "account" | "paymaster",
    window: ValidityWindow,
    paymaster?: Address,
  ): OutOfTimeRangeError | undefined {
    const detail = window.unit === "seconds" ? secondsDetail(window) : blocksDetail(entity, window);
    if (detail === undefined) return undefined;
    const text = entity === "account" ? entryPointReasons[22] : entryPointReasons[32];
    return new OutOfTimeRangeError(`${text}: ${detail}`, {
      window,
      paymaster: entity === "paymaster" ? paymaster : undefined,
    });
  }
}

function secondsDetail({ validAfter, validUntil, now, minValidity }: ValidityWindow): string | undefined {
  if (validUntil < now) return `validUntil ${validUntil} passed ${now - validUntil} s ago`;
  if (validAfter > now) return `validAfter ${validAfter} is ${validAfter - now} s from now`;
  if (validUntil < now + minValidity) return `validUntil ${validUntil} is within ${minValidity} s (${validUntil - now} s from now): too soon to bundle`;
  return undefined;
}

function blocksDetail(entity: string, { validAfter, validUntil, now: next, minValidity }: ValidityWindow): string | undefined {
  if (validUntil < next) return `${entity} validity ended at block ${validUntil}; the next block is ${next}`;
  if (validAfter >= next) return `${entity} validity starts after block ${validAfter}; the next block is ${next}`;
  if (validUntil < next + minValidity) {
    return `${entity} validity ends at block ${validUntil}, ${validUntil - next + 1n} blocks from now: too soon to bundle (at least ${minValidity + 1n} needed)`;
  }
  return undefined;
}

/** A paymaster's deposit against what its operations in the pool and this one may cost. */
export interface PaymasterDepositShortfall {
  deposit: bigint;
  /** The most they may cost together, this operation included. */
  required: bigint;
  /** How many of its operations the pool already holds. */
  pooledOperations: number;
}

/**
 * The paymaster's deposit is too low (`AA31`): the EntryPoint's own check of this operation, or
 * the mempool's (ERC-7562 EREP-010), where `shortfall` says by how much: the deposit cannot
 * cover its operations in the pool and this one at their most.
 */
export class PaymasterDepositError extends EntryPointRefusalError {
  override readonly kind = "paymasterDepositTooLow";
  override name = "PaymasterDepositError";
  readonly shortfall: PaymasterDepositShortfall | undefined;
  constructor(
    reason: string,
    facts: EntryPointRefusalFacts & { shortfall?: PaymasterDepositShortfall | undefined } = {},
  ) {
    super(reason, facts);
    this.shortfall = facts.shortfall;
  }

  /** The mempool's refusal of `paymaster`, whose deposit cannot cover `shortfall.required`. */
  static inPool(paymaster: Address, shortfall: PaymasterDepositShortfall): PaymasterDepositError {
    const { deposit, required, pooledOperations: pooled } = shortfall;
    return new PaymasterDepositError(
      `${entryPointReasons[31]}: paymaster ${paymaster} deposit of ${deposit} wei cannot cover its ${pooled} operation${pooled === 1 ? "" : "s"} in the mempool and this one: they may cost up to ${required} wei`,
      { paymaster, shortfall },
    );
  }
}

/** Every refusal in the EntryPoint's terms. */
export type EntryPointRefusal =
  | EntryPointRejectionError
  | PaymasterRejectionError
  | SignatureInvalidError
  | OutOfTimeRangeError
  | PaymasterDepositError;

/**
 * The refusal for an EntryPoint failure `reason`, of the kind its `AAxx` code says: a signature
 * (AA24, AA34), a validity window (AA22, AA32), the paymaster's deposit (AA31), another of the
 * paymaster's (AA3x), or the EntryPoint's (anything else).
 */
export function entryPointRefusal(
  reason: string,
  facts: EntryPointRefusalFacts = {},
): EntryPointRefusal {
  const { code, entity } = parseFailureReason(reason);
  if (code === 24 || code === 34) return new SignatureInvalidError(reason, facts);
  if (code === 22 || code === 32) return new OutOfTimeRangeError(reason, facts);
  if (code === 31) return new PaymasterDepositError(reason, facts);
  if (entity === "paymaster") return new PaymasterRejectionError(reason, facts);
  return new EntryPointRejectionError(reason, facts);
}

/**
 * The account or the paymaster returned a signature aggregator, which this bundler does not
 * support: `handleOps` would fail with AA24 (AA34 for the paymaster).
 */
export class UnsupportedAggregatorError extends BundlerError {
  override readonly kind = "unsupportedAggregator";
  override name = "UnsupportedAggregatorError";
  readonly entity: Extract<FailureEntity, "account" | "paymaster">;
  readonly aggregator: Address;
  constructor(entity: "account" | "paymaster", aggregator: Address) {
    const text = entity === "account" ? entryPointReasons[24] : entryPointReasons[34];
    super(
      `${text}: ${entity} requires aggregator ${aggregator}, which this bundler does not support`,
    );
    this.entity = entity;
    this.aggregator = aggregator;
  }
}

/** The operation's own call reverted while estimating its gas. */
export class ExecutionRevertedError extends BundlerError {
  override readonly kind = "executionReverted";
  override name = "ExecutionRevertedError";
  readonly revertData: string;
  readonly reason: string | undefined;
  constructor(revertData: string, reason?: string) {
    super(reason ? `execution reverted: ${reason}` : "execution reverted");
    this.revertData = revertData;
    this.reason = reason;
  }
}

/** The store already holds an operation with this hash, in the pool or included. */
export class DuplicateUserOperationError extends BundlerError {
  override readonly kind = "duplicateUserOperation";
  override name = "DuplicateUserOperationError";
  readonly userOpHash: string;
  constructor(userOpHash: string) {
    super(`user operation ${userOpHash} is already known`);
    this.userOpHash = userOpHash;
  }
}

/**
 * A mempool policy refused the operation, saying why (e.g. the operation it would replace is
 * already being bundled). A policy of your own throws it, or another domain error.
 */
export class MempoolRejectionError extends BundlerError {
  override readonly kind = "mempoolRejected";
  override name = "MempoolRejectionError";
  /** The pooled operation it would have replaced, if any. */
  readonly replacing: Hash | undefined;
  constructor(message: string, facts: { replacing?: Hash | undefined } = {}) {
    super(message);
    this.replacing = facts.replacing;
  }
}

/**
 * An operation with the sender and nonce of a pending one replaces it only with both fees raised
 * by the replacement bump: the least each must be is in `required…`.
 */
export class ReplacementUnderpricedError extends BundlerError {
  override readonly kind = "replacementUnderpriced";
  override name = "ReplacementUnderpricedError";
  readonly replacing: Hash;
  readonly requiredMaxFeePerGas: bigint;
  readonly requiredMaxPriorityFeePerGas: bigint;
  constructor(replacing: Hash, requiredMaxFeePerGas: bigint, requiredMaxPriorityFeePerGas: bigint) {
    super(
      `replacement underpriced: an operation with this sender and nonce is pending; raise maxFeePerGas to at least ${requiredMaxFeePerGas} and maxPriorityFeePerGas to at least ${requiredMaxPriorityFeePerGas}`,
    );
    this.replacing = replacing;
    this.requiredMaxFeePerGas = requiredMaxFeePerGas;
    this.requiredMaxPriorityFeePerGas = requiredMaxPriorityFeePerGas;
  }
}

/** An entity of the operation is banned, or throttled with its share of the mempool used up, by ERC-7562 reputation. */
export class ReputationError extends BundlerError {
  override readonly kind = "throttledOrBanned";
  override name = "ReputationError";
  /** The entity's role in the operation, e.g. `paymaster`. */
  readonly role: string;
  readonly address: Address;
  readonly status: "throttled" | "banned";
  constructor(role: string, address: Address, status: "throttled" | "banned") {
    super(`${role} ${address} is ${status}`);
    this.role = role;
    this.address = address;
    this.status = status;
  }
}

/** An unstaked sender already has as many operations in the pool as it may (ERC-7562 UREP-010). */
export class SenderLimitError extends BundlerError {
  override readonly kind = "senderLimit";
  override name = "SenderLimitError";
  readonly sender: string;
  readonly limit: number;
  constructor(sender: string, limit: number) {
    super(
      `sender ${sender} already has ${limit} operations in the mempool, the most an unstaked sender may have; wait for one to be included`,
    );
    this.sender = sender;
    this.limit = limit;
  }
}

/**
 * An unstaked factory or paymaster already has as many operations in the pool as its inclusion
 * record allows (ERC-7562 UREP-020).
 */
export class EntityLimitError extends BundlerError {
  override readonly kind = "entityLimit";
  override name = "EntityLimitError";
  readonly role: string;
  readonly address: Address;
  readonly limit: number;
  constructor(role: string, address: Address, limit: number) {
    super(
      `unstaked ${role} ${address} already has ${limit} operations in the mempool, the most its inclusion record allows (UREP-020); wait for some to be included, or stake it`,
    );
    this.role = role;
    this.address = address;
    this.limit = limit;
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
 * The operation's validation broke ERC-7562 rules. The message names the first violation
 * ("factory 0x… uses banned opcode TIMESTAMP (OP-011)"); `violations` lists all.
 */
export class RuleViolationError extends BundlerError {
  override readonly kind = "ruleViolation";
  override name = "RuleViolationError";
  readonly violations: readonly RuleViolationDetail[];
  constructor(violations: readonly RuleViolationDetail[]) {
    const [first] = violations;
    const more = violations.length > 1 ? `; and ${violations.length - 1} more` : "";
    super(`${first!.entity} ${first!.address} ${first!.subject} (${first!.rule})${more}`);
    this.violations = violations;
  }
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
 * below `minStake` or an unstake delay below `minUnstakeDelay`. The message names the entity,
 * what is below the minimum and the first violation.
 */
export class StakeTooLowError extends BundlerError {
  override readonly kind = "stakeTooLow";
  override name = "StakeTooLowError";
  readonly shortfall: StakeShortfall;
  readonly violations: readonly RuleViolationDetail[];
  constructor(shortfall: StakeShortfall, violations: readonly RuleViolationDetail[]) {
    const { entity, address, stake, unstakeDelaySec, minStake, minUnstakeDelay } = shortfall;
    const short = [
      ...(stake < minStake ? [`stake ${stake} wei is below the minimum ${minStake} wei`] : []),
      ...(unstakeDelaySec < BigInt(minUnstakeDelay)
        ? [`unstake delay ${unstakeDelaySec} s is below the minimum ${minUnstakeDelay} s`]
        : []),
    ];
    const [first] = violations;
    const more = violations.length > 1 ? `; and ${violations.length - 1} more` : "";
    super(
      `${entity} ${address} ${short.join(" and ")}: ${first!.entity} ${first!.address} ${first!.subject} (${first!.rule})${more}`,
    );
    this.shortfall = { entity, address, stake, unstakeDelaySec, minStake, minUnstakeDelay };
    this.violations = violations;
  }
}

/**
 * The validation read state the node's prestate did not include, so its trace cannot be trusted:
 * the operation is refused, never validated on a guessed value.
 */
export class TraceIncompleteError extends BundlerError {
  override readonly kind = "traceIncomplete";
  override name = "TraceIncompleteError";
  /** What the run read and the prestate lacked (accounts, `address:slot`). */
  readonly missing: readonly string[];
  constructor(missing: readonly string[]) {
    super(
      `validation read state outside the node's prestate (${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", …" : ""}); refused rather than guessed`,
    );
    this.missing = missing;
  }
}

/** The node or another dependency failed; the caller may retry. */
export class InfrastructureError extends BundlerError {
  override readonly kind = "infrastructure";
  override name = "InfrastructureError";
}

/**
 * The engine is at its cap of concurrent simulations, with its wait queue full, or the request
 * waited `waitedMs` in that queue without a slot. Nothing was done: the same request may be sent
 * again after `retryAfterSeconds`, about how long the queue takes to drain at the current pace.
 */
export class BusyError extends BundlerError {
  override readonly kind = "busy";
  override name = "BusyError";
  readonly running: number;
  readonly queued: number;
  /** How long the request waited for a slot, when it was refused for waiting too long. */
  readonly waitedMs: number | undefined;
  /** Seconds after which a retry should find a slot: the queue's drain time at the recent pace. */
  readonly retryAfterSeconds: number;
  constructor(running: number, queued: number, options: { waitedMs?: number; retryAfterSeconds?: number } = {}) {
    const { waitedMs, retryAfterSeconds = 1 } = options;
    super(
      waitedMs === undefined
        ? `the bundler is busy: ${running} simulations are running and ${queued} waiting, the most it takes; retry in a moment`
        : `the bundler is busy: waited ${waitedMs} ms without a free simulation slot (${running} running, ${queued} waiting); retry in a moment`,
    );
    this.running = running;
    this.queued = queued;
    this.waitedMs = waitedMs;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The service is shutting down and could not finish the request within its grace period. An
 * operation being sent may or may not have been stored: look it up by hash, or send it again.
 */
export class ShuttingDownError extends BundlerError {
  override readonly kind = "shuttingDown";
  override name = "ShuttingDownError";
  constructor() {
    super(
      "the bundler is shutting down and did not finish this request; retry (an operation being sent may already be stored: look it up by hash)",
    );
  }
}

/** Every domain error the engine raises; `kind` tells them apart. */
export type DomainError =
  | InvalidParamsError
  | UnsupportedEntryPointError
  | PriorityFeeAboveMaxFeeError
  | GasLimitTooHighError
  | UserOperationTooLargeError
  | BundleGasTooLargeError
  | FeeBelowBaseFeeError
  | GasPriceTooLowError
  | PreVerificationGasTooLowError
  | InvalidAuthorizationError
  | ProposalNotOpenError
  | EntryPointRefusal
  | UnsupportedAggregatorError
  | ExecutionRevertedError
  | DuplicateUserOperationError
  | MempoolRejectionError
  | ReplacementUnderpricedError
  | ReputationError
  | SenderLimitError
  | EntityLimitError
  | RuleViolationError
  | StakeTooLowError
  | TraceIncompleteError
  | InfrastructureError
  | BusyError
  | ShuttingDownError;

/** The `kind` of each domain error. */
export type DomainErrorKind = DomainError["kind"];
