import type { Hash } from "viem";
import { getUserOperationHash as viemGetUserOperationHash } from "viem/account-abstraction";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { UserOperation } from "./types.ts";

/**
 * The userOpHash the EntryPoint computes: for v0.6/v0.7 `keccak(abi.encode(keccak(packed), ep,
 * chainId))`, for v0.8 the EIP-712 hash with domain ("ERC4337", "1", chainId, ep). Computed
 * once on admission and stored with the operation.
 */
export function getUserOperationHash(op: UserOperation, entryPoint: EntryPoint, chainId: number): Hash {
  return viemGetUserOperationHash({
    userOperation: op as never,
    entryPointAddress: entryPoint.address,
    entryPointVersion: entryPoint.version,
    chainId,
  });
}
