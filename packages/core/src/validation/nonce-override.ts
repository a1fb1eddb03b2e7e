import { type Address, encodeAbiParameters, type Hex, keccak256, numberToHex } from "viem";
import { splitNonce } from "../userop/types.ts";
import type { StateOverride } from "../ports/eth-call.ts";

/**
 * Storage slot of `nonceSequenceNumber[sender][key]`. In every EntryPoint release the
 * `NonceManager` mapping sits at slot 1, right after `StakeManager`'s `deposits`.
 */
export function nonceSlot(sender: Address, key: bigint): Hex {
  const inner = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [sender, 1n]));
  return keccak256(encodeAbiParameters([{ type: "uint192" }, { type: "bytes32" }], [key, inner]));
}

/**
 * A state override under which the EntryPoint expects `nonce` next from `sender`: how an
 * operation queued behind the sender's pending ones is simulated before those are on chain.
 */
export function nonceOverride(entryPoint: Address, sender: Address, nonce: bigint): StateOverride {
  const { key, sequence } = splitNonce(nonce);
  return { [entryPoint]: { stateDiff: { [nonceSlot(sender, key)]: numberToHex(sequence, { size: 32 }) } } };
}
