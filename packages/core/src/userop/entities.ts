import type { Address } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { factoryOf, paymasterOf, type UserOperation } from "./types.ts";

/** The roles an address plays in an operation, as ERC-7562 names its entities. */
export type EntityRole = "account" | "factory" | "paymaster" | "aggregator";

/** One entity of an operation. */
export interface Entity {
  role: EntityRole;
  address: Address;
}

/**
 * The entities an operation names: its account (the sender), its factory (not the EIP-7702
 * marker `0x7702`, which is no contract) and its paymaster, checksummed.
 */
export function entitiesOf(op: UserOperation): Entity[] {
  const entities: Entity[] = [{ role: "account", address: getAddress(op.sender) }];
  const factory = factoryOf(op);
  if (factory && factory.length === 42)
    entities.push({ role: "factory", address: getAddress(factory) });
  const paymaster = paymasterOf(op);
  if (paymaster) entities.push({ role: "paymaster", address: getAddress(paymaster) });
  return entities;
}
