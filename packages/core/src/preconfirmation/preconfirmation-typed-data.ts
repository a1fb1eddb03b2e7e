import type { Address, Hash } from "viem";

/** What a preconfirmation commits to: the operation, its EntryPoint and chain, the block and transaction. */
export interface PreconfirmationTypedDataParameters {
  userOpHash: Hash;
  entryPoint: Address;
  chainId: number;
  blockNumber: bigint;
  transactionHash: Hash;
}

/** The EIP-712 types of a preconfirmation (the wire protocol's; see docs/sequencer.md). */
export const preconfirmationTypes = {
  Preconfirmation: [
    { name: "userOpHash", type: "bytes32" },
    { name: "blockNumber", type: "uint256" },
    { name: "transactionHash", type: "bytes32" },
  ],
} as const;

/**
 * The EIP-712 typed data a preconfirmation signature covers, in viem's form: what the engine
 * signs, and what a user passes to viem's `verifyTypedData` (with `address` and `signature`) to
 * hold the operator to it. Domain `Bundlekit Preconfirmation`, version `1`, the chain, and the
 * EntryPoint as the verifying contract.
 */
export function preconfirmationTypedData(parameters: PreconfirmationTypedDataParameters) {
  const { userOpHash, entryPoint, chainId, blockNumber, transactionHash } = parameters;
  return {
    domain: { name: "Bundlekit Preconfirmation", version: "1", chainId, verifyingContract: entryPoint },
    types: preconfirmationTypes,
    primaryType: "Preconfirmation",
    message: { userOpHash, blockNumber, transactionHash },
  } as const;
}
