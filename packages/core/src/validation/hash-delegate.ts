import type { Address } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { hashesDelegate } from "../userop/hash.ts";
import type { UserOperation } from "../userop/types.ts";
import { delegateOf } from "./rules/delegation-rules.ts";

/** Whether hashing `op` needs the delegate in its sender's code: a v0.8+ `0x7702` operation without an authorization. */
export function needsHashDelegate(op: UserOperation, entryPoint: Pick<EntryPoint, "version">): boolean {
  return !op.authorization && hashesDelegate(op, entryPoint.version);
}

/**
 * The delegate a v0.8+ `0x7702` operation without an authorization (its sender delegated
 * already) is hashed with: the one in the sender's code now (`0xef0100 ‖ address`), as the
 * EntryPoint reads it. Undefined, without a read, for every other operation.
 */
export async function readHashDelegate(client: Pick<ChainClient, "getCode">, op: UserOperation, entryPoint: Pick<EntryPoint, "version">): Promise<Address | undefined> {
  if (!needsHashDelegate(op, entryPoint)) return undefined;
  return delegateOf(await client.getCode({ address: op.sender }));
}
