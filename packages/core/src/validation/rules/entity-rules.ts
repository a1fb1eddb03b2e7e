import { type Address, isAddressEqual, size } from "viem";
import { getAddress } from "../../utils/get-address.ts";
import { RuleViolationError } from "../../errors/errors.ts";
import type { MempoolStore } from "../../ports/mempool-store.ts";
import { entitiesOf } from "../../userop/entities.ts";
import { isStaked, type StakeRequirement } from "../../reputation/stake.ts";
import { paymasterOf, type UserOperation } from "../../userop/types.ts";
import type { ValidationResult } from "../../ports/validation-result.ts";
import { ruleRefusal } from "./stake-refusal.ts";

/**
 * EREP-050: only a staked paymaster may return a context (for its `postOp`). -32502, or -32505
 * when the paymaster has a stake below the minimum (`ruleRefusal`).
 */
export function refuseUnstakedContext(op: UserOperation, validation: ValidationResult, requirement: StakeRequirement) {
  const paymaster = paymasterOf(op);
  const context = validation.paymasterContext;
  if (!paymaster || context === "0x" || isStaked(validation.paymasterStake, requirement)) return;
  const entity = { role: "paymaster" as const, address: getAddress(paymaster) };
  const subject = `returns a context of ${size(context)} bytes but is not staked`;
  throw ruleRefusal([{ rule: "EREP-050", entity: entity.role, address: entity.address, subject, allowedIfStaked: entity }], validation, requirement);
}

/**
 * STO-040, both ways (-32502): a factory or paymaster may not be the sender of another operation
 * in the pool, and a sender may not be the factory or paymaster of another.
 */
export async function refuseMultipleRoles(store: Pick<MempoolStore, "listBySender" | "listByEntity">, entryPoint: Address, op: UserOperation) {
  for (const entity of entitiesOf(op)) {
    if (entity.role === "account") {
      const other = (await store.listByEntity(entryPoint, entity.address)).find((e) => !isAddressEqual(e.userOperation.sender, entity.address));
      if (other) {
        const role = entitiesOf(other.userOperation).find((e) => e.role !== "account" && e.address === entity.address)!.role;
        throw new RuleViolationError([{ rule: "STO-040", entity: "account", address: entity.address, subject: `is the ${role} of another operation in the mempool` }]);
      }
    } else if ((await store.listBySender(entryPoint, entity.address)).length > 0) {
      throw new RuleViolationError([{ rule: "STO-040", entity: entity.role, address: entity.address, subject: "is the sender of another operation in the mempool" }]);
    }
  }
}
