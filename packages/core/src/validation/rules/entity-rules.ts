import { type Address, getAddress, isAddressEqual, size } from "viem";
import { RuleViolationError } from "../../errors/errors.ts";
import type { MempoolStore } from "../../ports/mempool-store.ts";
import { entitiesOf } from "../../reputation/entities.ts";
import { paymasterOf, type UserOperation } from "../../userop/types.ts";

/** EREP-050 (-32502): only a staked paymaster may return a context (for its `postOp`). */
export function refuseUnstakedContext(op: UserOperation, context: `0x${string}`, paymasterStaked: boolean) {
  const paymaster = paymasterOf(op);
  if (!paymaster || paymasterStaked || context === "0x") return;
  throw new RuleViolationError([{ rule: "EREP-050", entity: "paymaster", address: getAddress(paymaster), subject: `returns a context of ${size(context)} bytes but is not staked` }]);
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
