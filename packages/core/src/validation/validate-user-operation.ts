import { getAddress } from "../utils/get-address.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import {
  EntryPointRefusalError,
  entryPointRefusal,
  OutOfTimeRangeError,
  PreVerificationGasTooLowError,
  UnsupportedAggregatorError,
} from "../errors/errors.ts";
import { entryPointReasons } from "../errors/failure-reason.ts";
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
import type { ValidationResult } from "../ports/validation-result.ts";
import type { ValidationTrace } from "../ports/validation-trace.ts";

/** What the ERC-7562 rules are checked with. */
export interface ValidationRules extends StakeRequirement {
  /** Entities exempt from reputation and stake rules: treated as staked. */
  whitelistedEntities: WhitelistedEntities;
  /** The chain has the P256VERIFY precompile at 0x100 and entities may call it (OP-062). */
  p256Precompile: boolean;
  /** Most bytes of `context` a paymaster's validation may return (LIM-020). */
  maxPaymasterContextBytes: number;
}

/** A validated operation: the EntryPoint's result, and its trace when validated in safe mode. */
export interface ValidatedOperation extends ValidationResult {
  trace: ValidationTrace | undefined;
}

export interface ValidateContext {
  simulator: Simulator;
  rules: ValidationRules;
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
  const simulate = () => context.simulator.simulateValidation(entryPoint, op, { stateOverride: context.stateOverride });
  let simulated: Awaited<ReturnType<typeof simulate>>;
  let l1Gas = 0n;
  if (context.l1DataGas) {
    [simulated, l1Gas] = await Promise.all([
      simulate().catch((error: unknown) => {
        throw namingPaymaster(error, op);
      }),
      context.l1DataGas(op),
    ]);
  } else {
    // On L1 there is no L1 data fee to wait for beside the simulation: one await, no promise around it.
    try {
      simulated = await simulate();
    } catch (error) {
      throw namingPaymaster(error, op);
    }
  }
  const { validation: result, trace } = simulated;
  if (trace) {
    const violations = ruleViolations(context.rules, entryPoint, op, result, trace);
    if (violations.length > 0) throw ruleRefusal(violations, result, context.rules);
  }
  checkPaymasterContextSize(op, result.paymasterContext, context.rules.maxPaymasterContextBytes);
  const minValidity = context.minValiditySeconds ?? 30n;
  for (const [entity, data] of [["account", result.account], ["paymaster", result.paymaster]] as const) {
    if (!data) continue;
    if (data.signatureFailed) {
      throw namingPaymaster(entryPointRefusal(entity === "account" ? entryPointReasons[24] : entryPointReasons[34]), op);
    }
    if (data.aggregator !== "0x0000000000000000000000000000000000000000" && !data.signatureFailed) {
      throw new UnsupportedAggregatorError(entity, data.aggregator);
    }
    const paymaster = entity === "paymaster" ? getAddress(paymasterOf(op)!) : undefined;
    const bounds = { validAfter: data.validAfter, validUntil: data.validUntil };
    const window = data.blockRange
      ? { ...bounds, unit: "blocks" as const, now: await nextBlock(context, entity), minValidity: context.minValidityBlocks ?? 2n }
      : { ...bounds, unit: "seconds" as const, now: context.nowSeconds, minValidity };
    const outOfRange = OutOfTimeRangeError.check(entity, window, paymaster);
    if (outOfRange) throw outOfRange;
  }
  const verificationGasUsed = result.preOpGas - op.preVerificationGas;
  const required = calculatePreVerificationGas(op, verificationGasUsed > 0n ? verificationGasUsed : 0n, entryPoint.version, context.preVerificationGas) + l1Gas;
  if (op.preVerificationGas < required) throw new PreVerificationGasTooLowError(op.preVerificationGas, required, l1Gas);
  return { ...result, trace };
}

/**
 * The next block's number, for a v0.9 validity range in blocks; a bundler that cannot read the
 * head refuses such a range (AA22/AA32 with the reason).
 */
async function nextBlock(context: { blockNumber?: (() => Promise<bigint>) | undefined }, entity: "account" | "paymaster"): Promise<bigint> {
  if (!context.blockNumber) {
    throw new OutOfTimeRangeError(`${entity === "account" ? entryPointReasons[22] : entryPointReasons[32]}: ${entity} validity is a range of block numbers, which this bundler cannot check`);
  }
  return (await context.blockNumber()) + 1n;
}

/**
 * A refusal the paymaster is blamed for (an `AA3x` reason) names it, as ERC-7769 asks of -32501:
 * admission and estimation alike. Other errors pass through unchanged.
 */
export function namingPaymaster(error: unknown, op: UserOperation): unknown {
  const paymaster = paymasterOf(op);
  if (!(error instanceof EntryPointRefusalError) || error.failure.entity !== "paymaster" || !paymaster) return error;
  return entryPointRefusal(error.reason, { revertData: error.revertData, deployedBy: error.deployedBy, paymaster });
}

/** The ERC-7562 rules broken in `trace`, with each entity's stake (whitelisted ones count as staked). */
export function ruleViolations(
  rules: ValidationRules,
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
