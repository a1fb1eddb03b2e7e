import type { Address } from "viem";
import {
  entryPoint06Address,
  entryPoint07Address,
  entryPoint08Address,
  entryPoint09Address,
} from "viem/account-abstraction";

/**
 * The EntryPoint releases Bundlekit speaks. v0.8 shares v0.7's packed layout, adds EIP-712 hashing
 * and EIP-7702. v0.9 hashes as v0.8 and adds the paymaster signature (a suffix of
 * `paymasterAndData` the userOpHash leaves out), block-number validity ranges, and ignores
 * `initCode` for a sender that is already deployed.
 */
export type EntryPointVersion = "0.6" | "0.7" | "0.8" | "0.9";

/** Every supported version, oldest first. */
export const entryPointVersions: readonly EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];

/** Where each version is deployed on every chain (deterministic CREATE2 deployment). */
export const canonicalEntryPoints: Readonly<Record<EntryPointVersion, Address>> = {
  "0.6": entryPoint06Address,
  "0.7": entryPoint07Address,
  "0.8": entryPoint08Address,
  "0.9": entryPoint09Address,
};
