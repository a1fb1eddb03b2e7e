import { type Address, type Hex, keccak256 } from "viem";

/** How far past `keccak(A‖x)` a slot may lie and still be associated with `A` (a struct in a mapping). */
const maxOffset = 128n;

/** Tells whether a storage slot is associated with an address (ERC-7562 "associated storage"). */
export type AssociatedSlots = (slot: Hex, address: Address) => boolean;

/**
 * From a validation's `KECCAK256` inputs, the test ERC-7562 defines: slot `s` is associated with
 * `A` when `s == A`, or `s == keccak(A‖x) + n` with `n` in 0..128.
 */
export function associatedSlots(keccakInputs: readonly Hex[]): AssociatedSlots {
  const bases = new Map<string, bigint[]>();
  for (const input of keccakInputs) {
    if (input.length < 66) continue;
    const key = `0x${input.slice(26, 66)}`;
    const list = bases.get(key) ?? [];
    list.push(BigInt(keccak256(input)));
    bases.set(key, list);
  }
  return (slot, address) => {
    const value = BigInt(slot);
    if (value === BigInt(address)) return true;
    return (bases.get(address.toLowerCase()) ?? []).some((base) => value >= base && value - base <= maxOffset);
  };
}
