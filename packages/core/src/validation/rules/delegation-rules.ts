import { type Address, isAddressEqual, sliceHex } from "viem";
import { getAddress } from "../../utils/get-address.ts";
import { RuleViolationError } from "../../errors/errors.ts";
import type { ChainClient } from "../../ports/chain-client.ts";
import type { MempoolEntry } from "../../ports/mempool-store.ts";
import { entitiesOf } from "../../userop/entities.ts";
import type { UserOperation } from "../../userop/types.ts";

/** The EIP-7702 delegation designator that starts a delegated account's code. */
const delegationPrefix = "0xef0100";

/** The address an account's code delegates to under EIP-7702, or undefined when it is no delegated account. */
export function delegateOf(code: `0x${string}` | undefined): Address | undefined {
  return code && code.length === 48 && code.toLowerCase().startsWith(delegationPrefix) ? getAddress(sliceHex(code, 3)) : undefined;
}

/**
 * AUTH-020 (-32502): an EIP-7702 account may only be an operation's sender, not its factory or
 * paymaster. Checked before simulation: one code read per entity.
 */
export async function refuseDelegatedEntities(client: Pick<ChainClient, "getCode">, op: UserOperation): Promise<void> {
  for (const entity of entitiesOf(op)) {
    if (entity.role === "account") continue;
    const delegate = delegateOf(await client.getCode({ address: entity.address }));
    if (delegate) {
      throw new RuleViolationError([{ rule: "AUTH-020", entity: entity.role, address: entity.address, subject: `is an EIP-7702 account (delegating to ${delegate}), which may only be a sender` }]);
    }
  }
}

/**
 * AUTH-040 (-32502): every operation of one sender in the pool that carries an EIP-7702
 * authorization delegates to the same address. `pooled` are the sender's operations in the pool;
 * the one `op` replaces (same nonce) does not count.
 */
export function refuseSecondDelegate(pooled: readonly MempoolEntry[], op: UserOperation): void {
  if (!op.authorization) return;
  const delegate = op.authorization.address;
  for (const { userOperation: other } of pooled) {
    if (!other.authorization || other.nonce === op.nonce) continue;
    if (!isAddressEqual(other.authorization.address, delegate)) {
      throw new RuleViolationError([
        {
          rule: "AUTH-040",
          entity: "account",
          address: getAddress(op.sender),
          subject: `has an operation in the mempool whose authorization delegates to ${getAddress(other.authorization.address)}, not ${getAddress(delegate)}`,
        },
      ]);
    }
  }
}
