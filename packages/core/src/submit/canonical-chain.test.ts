import { type Hash, keccak256, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { createCanonicalChain } from "./canonical-chain.ts";

/** A block of a chain named `fork`: its hash depends on the fork and the number, its parent's on the parent's. */
const block = (number: number, fork = "a", parentFork = fork) => ({
  number: BigInt(number),
  hash: hashOf(number, fork),
  parentHash: hashOf(number - 1, parentFork),
});
const hashOf = (number: number, fork: string): Hash => keccak256(toHex(`${fork}${number}`));

describe("the canonical chain from linked heads", () => {
  it("holds every block of an unbroken run of heads, and only the latest `depth` of them", () => {
    const chain = createCanonicalChain(3);
    for (let n = 10; n <= 14; n++) chain.advance(block(n));
    expect([10, 11, 12, 13, 14].map((n) => chain.holds(BigInt(n), hashOf(n, "a")))).toEqual([false, false, true, true, true]);
    expect(chain.holds(14n, hashOf(14, "b"))).toBe(false);
  });

  it("after a reorg, holds the new blocks and none of the replaced ones", () => {
    const chain = createCanonicalChain(12);
    for (let n = 10; n <= 14; n++) chain.advance(block(n));
    // Blocks 13 and 14 replaced: the new 14's parent is the new 13, not the one recorded.
    chain.advance(block(14, "b", "b"));
    expect(chain.holds(13n, hashOf(13, "a"))).toBe(false);
    expect(chain.holds(12n, hashOf(12, "a"))).toBe(false); // not linked to the new head: not known
    expect(chain.holds(14n, hashOf(14, "b"))).toBe(true);
    // Only the head replaced: its parent is the recorded 13, which stays.
    const other = createCanonicalChain(12);
    for (let n = 10; n <= 14; n++) other.advance(block(n));
    other.advance(block(14, "c", "a"));
    expect(other.holds(14n, hashOf(14, "a"))).toBe(false);
    expect(other.holds(13n, hashOf(13, "a"))).toBe(true);
  });

  it("after a rollback to a recorded block, forgets the blocks above it", () => {
    const chain = createCanonicalChain(12);
    for (let n = 10; n <= 14; n++) chain.advance(block(n));
    chain.advance(block(12));
    expect(chain.holds(13n, hashOf(13, "a"))).toBe(false);
    expect(chain.holds(12n, hashOf(12, "a"))).toBe(true);
    expect(chain.holds(11n, hashOf(11, "a"))).toBe(true);
  });

  it("starts afresh after a gap between heads, or a head without its parent hash", () => {
    const chain = createCanonicalChain(12);
    for (let n = 10; n <= 12; n++) chain.advance(block(n));
    chain.advance(block(15));
    expect(chain.holds(12n, hashOf(12, "a"))).toBe(false);
    expect(chain.holds(15n, hashOf(15, "a"))).toBe(true);
    chain.advance({ ...block(16), parentHash: undefined });
    expect(chain.holds(15n, hashOf(15, "a"))).toBe(false);
    expect(chain.holds(16n, hashOf(16, "a"))).toBe(true);
  });
});
