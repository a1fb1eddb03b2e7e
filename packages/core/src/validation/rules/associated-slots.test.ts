import {
  type Address,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  pad,
  toHex,
} from "viem";
import { describe, expect, it } from "vitest";
import { associatedSlots } from "./associated-slots.ts";

const account: Address = "0x1111111111111111111111111111111111111111";
const other: Address = "0x5555555555555555555555555555555555555555";
/** What `mapping(address => …)` at slot 3 hashes for `key`: the key and the slot, 64 bytes. */
const mappingInput = (key: Address) =>
  encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [key, 3n]);
const plus = (slot: Hex, n: bigint) => toHex(BigInt(slot) + n, { size: 32 });

describe("ERC-7562 associated storage (associatedSlots)", () => {
  const input = mappingInput(account);
  const base = keccak256(input);
  const associated = associatedSlots([input]);

  it("the slot keccak(A‖x) and the 128 slots after it are associated with A", () => {
    expect(associated(base, account)).toBe(true);
    expect(associated(plus(base, 1n), account)).toBe(true);
    expect(associated(plus(base, 128n), account)).toBe(true);
  });

  it("slots past keccak(A‖x) + 128, or before it, are not", () => {
    expect(associated(plus(base, 129n), account)).toBe(false);
    expect(associated(plus(base, -1n), account)).toBe(false);
  });

  it("the slot is associated with the address hashed, not with another", () => {
    expect(associated(base, other)).toBe(false);
  });

  it("matches the address whatever its letter case", () => {
    const lower: Address = "0xabcdef0123456789abcdef0123456789abcdef01";
    const slot = keccak256(mappingInput(lower));
    expect(associatedSlots([mappingInput(lower)])(slot, getAddress(lower))).toBe(true);
  });

  it("the slot numbered A itself is associated with A, with no keccak at all", () => {
    expect(associatedSlots([])(pad(account), account)).toBe(true);
    expect(associatedSlots([])(pad(account), other)).toBe(false);
  });

  it("keccak(A) of the bare address (32 bytes, nothing after it) counts too", () => {
    const bare = pad(account);
    expect(associatedSlots([bare])(keccak256(bare), account)).toBe(true);
  });

  it("inputs shorter than a word name no address", () => {
    const short = `0x${account.slice(2)}` as Hex; // 20 bytes
    expect(associatedSlots([short])(keccak256(short), account)).toBe(false);
  });

  it("keeps every base of an address: several mappings, each with its own range", () => {
    const second = encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [account, 9n]);
    const both = associatedSlots([input, second]);
    expect(both(plus(base, 5n), account)).toBe(true);
    expect(both(plus(keccak256(second), 5n), account)).toBe(true);
  });
});
