import type { Address } from "viem";
import { RuleViolationError } from "../../errors/errors.ts";
import type { Entity, EntityRole } from "../../userop/entities.ts";

/** An ERC-7562 rule an entity broke during validation. */
export interface RuleViolation {
  /** The rule's id, e.g. `OP-011`, `STO-021`, `COD-010`. */
  rule: string;
  /** The entity at fault and its address. */
  entity: EntityRole;
  address: Address;
  /** What it did, naming the subject, e.g. "uses banned opcode TIMESTAMP". */
  subject: string;
  /** The entity whose stake (SREP-010) would allow it, e.g. the factory for STO-022; absent when no stake would. */
  allowedIfStaked?: Entity | undefined;
}

/** "factory 0x… uses banned opcode TIMESTAMP (OP-011)". */
export function describeViolation(violation: RuleViolation): string {
  return new RuleViolationError([violation]).message;
}
