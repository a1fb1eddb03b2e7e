import type { Hash } from "viem";
import type { BlockHead } from "../ports/block-source.ts";

/**
 * The recent canonical chain as the heads given show it, each linked to the one before by its
 * parent hash. A block recorded here is the latest head or one of its ancestors (a block's hash
 * covers its parent's), so a bundle mined in it is still canonical without asking the node. A
 * head without a parent hash, or one that does not link to the block recorded below it (a gap
 * between polls, a reorg), starts the record afresh from that head.
 */
export interface CanonicalChain {
  /** Take the latest head: extend the record, cut it back (a rollback), or start it afresh. */
  advance(head: Pick<BlockHead, "number" | "hash" | "parentHash">): void;
  /** Whether block `number` with `hash` is recorded as canonical under the latest head. */
  holds(number: bigint, hash: Hash): boolean;
}

/** Keeps the latest `depth` blocks (a bundle is followed this many blocks deep, no further). */
export function createCanonicalChain(depth: number): CanonicalChain {
  const hashes = new Map<bigint, Hash>();
  const forgetFrom = (number: bigint) => {
    for (const recorded of hashes.keys()) if (recorded >= number) hashes.delete(recorded);
  };
  return {
    advance(head) {
      if (hashes.get(head.number) === head.hash) {
        forgetFrom(head.number + 1n);
      } else if (head.parentHash !== undefined && hashes.get(head.number - 1n) === head.parentHash) {
        forgetFrom(head.number);
        hashes.set(head.number, head.hash);
      } else {
        hashes.clear();
        hashes.set(head.number, head.hash);
      }
      for (const recorded of hashes.keys()) if (recorded <= head.number - BigInt(depth)) hashes.delete(recorded);
    },
    holds: (number, hash) => hashes.get(number) === hash,
  };
}
