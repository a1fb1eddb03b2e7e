import type { Address } from "viem";
import { entryPoint06Address, entryPoint07Address, entryPoint08Address } from "viem/account-abstraction";

/** The EntryPoint releases Bundlekit speaks. v0.8 shares v0.7's packed layout, adds EIP-712 hashing and EIP-7702. */
export type EntryPointVersion = "0.6" | "0.7" | "0.8";

/** Every supported version, oldest first. */
export const entryPointVersions: readonly EntryPointVersion[] = ["0.6", "0.7", "0.8"];

/** Where each version is deployed on every chain (deterministic CREATE2 deployment). */
export const canonicalEntryPoints: Readonly<Record<EntryPointVersion, Address>> = {
  "0.6": entryPoint06Address,
  "0.7": entryPoint07Address,
  "0.8": entryPoint08Address,
};
