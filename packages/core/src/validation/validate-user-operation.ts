import { getAddress } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { BundlerError, EntryPointRejectionError, InvalidParamsError, RpcErrorCode } from "../errors/errors.ts";
import { calculatePreVerificationGas, type PreVerificationGasConfig } from "../userop/pre-verification-gas.ts";
import type { Simulator } from "../ports/simulator.ts";
import { isStaked, type StakeRequirement } from "../reputation/stake.ts";
import type { WhitelistedEntities } from "../reputation/reputation.ts";
import { factoryOf, paymasterOf, type UserOperation } from "../userop/types.ts";
import { senderCreatorOf } from "./deployment-override.ts";
import { checkValidationRules } from "./rules/check-validation-rules.ts";
import type { RuleViolation } from "./rules/rule-violation.ts";
import { ruleRefusal } from "./rules/stake-refusal.ts";
import { checkPaymasterContextSize } from "./size-limits.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import type { ValidationData, ValidationResult } from "../ports/validation-result.ts";
import type { ValidationTrace } from "../ports/validation-trace.ts";

/** What the ERC-7562 rules are checked with. */
export interface ValidationRulesConfig extends StakeRequirement {
  /** Entities exempt from reputation and stake rules: treated as staked. */
  whitelistedEntities: WhitelistedEntities;
  /** The chain has the P256VERIFY precompile at 0x100 and entities may call it (OP-062). */
  p256Precompile: boolean;
  /** Most bytes of `context` a paymaster's validation may return (LIM-020). */
  maxPaymasterContextSize: number;
}

/** A validated operation: the EntryPoint's result, and its trace when validated in safe mode. */
export interface ValidatedOperation extends ValidationResult {
  trace: ValidationTrace | undefined;
}

export interface ValidateContext {
  simulator: Simulator;
  rules: ValidationRulesConfig;
  /** Seconds since the epoch. */
  nowSeconds: bigint;
  /** An operation must stay valid at least this long to be worth bundling. Default 30 s. */
  minValiditySeconds?: bigint;
  /**
   * The chain's latest block number, asked only for a v0.9 validity range in blocks. Such a range
   * must hold the next block and `minValidityBlocks` more. Default: none; such a range is refused.
   */
  blockNumber?: (() => Promise<bigint>) | undefined;
  /** Blocks a v0.9 block-number range must still hold after the next one. Default 2. */
  minValidityBlocks?: bigint;
  preVerificationGas?: PreVerificationGasConfig | undefined;
  /** preVerificationGas an L2 requires on top, for the operation's L1 data fee (`L1DataCost`); none on L1. */
  l1DataGas?: ((op: UserOperation) => Promise<bigint>) | undefined;
  /** Simulate on top of these overrides (e.g. a queued nonce). */
  stateOverride?: StateOverride | undefined;
}

/**
 * Stages 2 and 3 of validation: simulate on the node, then check what simulation reported —
 * signature, validity window, aggregator and the preVerificationGas the calldata needs.
 */
export async function validateUserOperation(
  context: ValidateContext,
  entryPoint: EntryPoint,
  op: UserOperation,
): Promise<ValidatedOperation> {
  const [{ validation: result, trace }, l1Gas] = await Promise.all([
    context.simulator.simulateValidation(entryPoint, op, { stateOverride: context.stateOverride }).catch((error: unknown) => {
      throw namingPaymaster(error, op);
    }),
    context.l1DataGas?.(op) ?? 0n,
  ]);
  if (trace) {
    const violations = ruleViolations(context.rules, entryPoint, op, result, trace);
    if (violations.length > 0) throw ruleRefusal(violations, result, context.rules);
  }
  checkPaymasterContextSize(op, result.paymasterContext, context.rules.maxPaymasterContextSize);
  const minValidity = context.minValiditySeconds ?? 30n;
  for (const [entity, data] of [["account", result.account], ["paymaster", result.paymaster]] as const) {
    if (!data) continue;
    if (data.signatureFailed) {
      throw namingPaymaster(new EntryPointRejectionError(entity === "account" ? "AA24 signature error" : "AA34 signature error"), op);
    }
    if (data.aggregator !== "0x0000000000000000000000000000000000000000" && !data.signatureFailed) {
      throw new BundlerError(RpcErrorCode.entryPointRejected, `${entity} requires aggregator ${data.aggregator}, which this bundler does not support`, {
        aggregator: data.aggregator,
      });
    }
    if (data.blockRange) {
      if (!context.blockNumber) throw new BundlerError(RpcErrorCode.outOfTimeRange, `${entity} validity is a range of block numbers, which this bundler cannot check`);
      checkValidityBlocks(entity, data, op, await context.blockNumber(), context.minValidityBlocks ?? 2n);
    } else {
      checkValidityWindow(entity, data, op, context.nowSeconds, minValidity);
    }
  }
  const verificationGasUsed = result.preOpGas - op.preVerificationGas;
  const required = calculatePreVerificationGas(op, verificationGasUsed > 0n ? verificationGasUsed : 0n, entryPoint.version, context.preVerificationGas) + l1Gas;
  if (op.preVerificationGas < required) {
    const l1Part = l1Gas > 0n ? ` (${l1Gas} of it for the L1 data fee)` : "";
    throw new InvalidParamsError(
      "preVerificationGas",
      `too low: expected at least ${required}${l1Part}, provided only ${op.preVerificationGas}`,
    );
  }
  return { ...result, trace };
}

/**
 * -32503 when the account's or the paymaster's validity window does not hold the operation long
 * enough to be bundled: expired (`validUntil` before now), not yet valid (`validAfter` after now),
 * or ending less than `minValidity` seconds from now. As ERC-7769 asks, `data` carries both bounds
 * and, for the paymaster's window, the paymaster.
 */
function checkValidityWindow(entity: "account" | "paymaster", window: ValidationData, op: UserOperation, now: bigint, minValidity: bigint) {
  const { validUntil, validAfter } = window;
  const refuse = (message: string) =>
    new BundlerError(RpcErrorCode.outOfTimeRange, `${entity} ${message}`, {
      validUntil: `0x${validUntil.toString(16)}`,
      validAfter: `0x${validAfter.toString(16)}`,
      ...(entity === "paymaster" ? { paymaster: getAddress(paymasterOf(op)!) } : {}),
    });
  if (validUntil < now) throw refuse(`validity expired at ${validUntil}, ${now - validUntil} s ago`);
  if (validAfter > now) throw refuse(`validity starts at ${validAfter}, ${validAfter - now} s from now`);
  if (validUntil < now + minValidity) {
    throw refuse(`validity ends at ${validUntil}, ${validUntil - now} s from now: too soon to bundle (at least ${minValidity} s needed)`);
  }
}

/**
 * -32503 for a v0.9 validity range in block numbers that does not hold the operation long
 * enough: the EntryPoint accepts it in blocks `validAfter + 1` to `validUntil`, and the next block
 * is `head + 1`; it must stay valid `minBlocks` blocks after that. AA22 (account) or AA32
 * (paymaster) "expired or not due", as the EntryPoint says, with the detail after it.
 */
function checkValidityBlocks(entity: "account" | "paymaster", window: ValidationData, op: UserOperation, head: bigint, minBlocks: bigint) {
  const { validUntil, validAfter } = window;
  const next = head + 1n;
  const refuse = (message: string) =>
    new BundlerError(RpcErrorCode.outOfTimeRange, `${entity === "account" ? "AA22" : "AA32"} expired or not due: ${entity} ${message}`, {
      validUntilBlock: `0x${validUntil.toString(16)}`,
      validAfterBlock: `0x${validAfter.toString(16)}`,
      ...(entity === "paymaster" ? { paymaster: getAddress(paymasterOf(op)!) } : {}),
    });
  if (validUntil < next) throw refuse(`validity ended at block ${validUntil}; the next block is ${next}`);
  if (validAfter >= next) throw refuse(`validity starts after block ${validAfter}; the next block is ${next}`);
  if (validUntil < next + minBlocks) {
    throw refuse(`validity ends at block ${validUntil}, ${validUntil - head} blocks from now: too soon to bundle (at least ${minBlocks + 1n} needed)`);
  }
}

/** ERC-7769: a rejection by the paymaster (-32501) carries its address in `data`. */
function namingPaymaster(error: unknown, op: UserOperation): unknown {
  const paymaster = paymasterOf(op);
  if (!(error instanceof EntryPointRejectionError) || error.code !== RpcErrorCode.paymasterRejected || !paymaster) return error;
  return new EntryPointRejectionError(error.reason, { ...error.data, paymaster });
}

/** The ERC-7562 rules broken in `trace`, with each entity's stake (whitelisted ones count as staked). */
export function ruleViolations(
  rules: ValidationRulesConfig,
  entryPoint: EntryPoint,
  op: UserOperation,
  result: ValidationResult,
  trace: ValidationTrace,
): RuleViolation[] {
  const listed = (role: keyof WhitelistedEntities, address: string | undefined) =>
    address !== undefined && rules.whitelistedEntities[role].some((a) => a.toLowerCase() === address.toLowerCase());
  const stakes = {
    account: isStaked(result.sender, rules) || listed("account", op.sender),
    factory: isStaked(result.factory, rules) || listed("factory", factoryOf(op)),
    paymaster: isStaked(result.paymasterStake, rules) || listed("paymaster", paymasterOf(op)),
  };
  return checkValidationRules({ op, entryPoint: entryPoint.address, senderCreator: senderCreatorOf(entryPoint), trace, stakes, p256Precompile: rules.p256Precompile });
}
