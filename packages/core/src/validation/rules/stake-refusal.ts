import { RuleViolationError, StakeTooLowError } from "../../errors/errors.ts";
import type { EntityRole } from "../../userop/entities.ts";
import type { StakeRequirement } from "../../reputation/stake.ts";
import type { StakeInfo, ValidationResult } from "../../ports/validation-result.ts";
import type { RuleViolation } from "./rule-violation.ts";

/** The entities' stakes as `simulateValidation` reported them. */
export type SimulatedStakes = Pick<ValidationResult, "sender" | "factory" | "paymasterStake">;

/**
 * The error that refuses an operation whose validation broke `violations`. -32505
 * (`StakeTooLowError`) when stake is all that is missing and it is short rather than absent: a
 * staked entity would have been allowed every violation (`allowedIfStaked`), and each entity that
 * would have to be staked has some stake, below `minStake` or `minUnstakeDelaySeconds`. It names the
 * first such entity. Otherwise -32502 (`RuleViolationError`): an entity with no stake at all is
 * unstaked, as ERC-7562's test suite and the reference bundler answer.
 */
export function ruleRefusal(
  violations: readonly RuleViolation[],
  stakes: SimulatedStakes,
  requirement: StakeRequirement,
): RuleViolationError | StakeTooLowError {
  const stakeOf = (role: EntityRole): StakeInfo =>
    role === "account"
      ? stakes.sender
      : role === "factory"
        ? stakes.factory
        : stakes.paymasterStake;
  const short = violations.every(
    (v) => v.allowedIfStaked !== undefined && stakeOf(v.allowedIfStaked.role).stake > 0n,
  );
  if (!short) return new RuleViolationError(violations);
  const { role, address } = violations[0]!.allowedIfStaked!;
  const { stake, unstakeDelaySec } = stakeOf(role);
  return new StakeTooLowError(
    {
      entity: role,
      address,
      stake,
      unstakeDelaySec,
      minStake: requirement.minStake,
      minUnstakeDelay: requirement.minUnstakeDelaySeconds,
    },
    violations,
  );
}
