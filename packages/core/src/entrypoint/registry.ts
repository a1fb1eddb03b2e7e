import type { Abi, Address } from "viem";
import { getAddress } from "../utils/get-address.ts";
import {
  entryPoint06Abi,
  entryPoint07Abi,
  entryPoint08Abi,
  entryPoint09Abi,
} from "viem/account-abstraction";
import { UnsupportedEntryPointError } from "../errors/errors.ts";
import {
  type EntryPointSimulations,
  entryPointSimulations07,
  entryPointSimulations08,
  entryPointSimulations09,
} from "./simulations.ts";
import { canonicalEntryPoints, type EntryPointVersion, entryPointVersions } from "./version.ts";

/** What the engine needs to know about one EntryPoint it serves. */
export interface EntryPoint {
  readonly address: Address;
  readonly version: EntryPointVersion;
  readonly abi: Abi;
  /** Simulation code injected by state override; absent for v0.6, whose EntryPoint simulates itself. */
  readonly simulations: EntryPointSimulations | undefined;
}

/** The EntryPoints one bundler serves, looked up by address (any letter case). */
export interface EntryPointRegistry {
  readonly all: readonly EntryPoint[];
  /** The EntryPoint at `address`, or undefined when it is not served. */
  find(address: string): EntryPoint | undefined;
  /** Like `find`, but throws `UnsupportedEntryPointError` (-32602) naming the supported ones. */
  get(address: string): EntryPoint;
}

const abis: Record<EntryPointVersion, Abi> = {
  "0.6": entryPoint06Abi,
  "0.7": entryPoint07Abi,
  "0.8": entryPoint08Abi,
  "0.9": entryPoint09Abi,
};

const simulations: Record<EntryPointVersion, EntryPointSimulations | undefined> = {
  "0.6": undefined,
  "0.7": entryPointSimulations07,
  "0.8": entryPointSimulations08,
  "0.9": entryPointSimulations09,
};

/** Describe an EntryPoint of a given version deployed at `address`. */
export function defineEntryPoint(version: EntryPointVersion, address?: Address): EntryPoint {
  return {
    address: getAddress(address ?? canonicalEntryPoints[version]),
    version,
    abi: abis[version],
    simulations: simulations[version],
  };
}

/** A registry over the given EntryPoints (default: the canonical v0.6, v0.7, v0.8 and v0.9). */
export function createEntryPointRegistry(
  entryPoints: readonly EntryPoint[] = entryPointVersions.map((version) =>
    defineEntryPoint(version),
  ),
): EntryPointRegistry {
  const byAddress = new Map(entryPoints.map((ep) => [ep.address.toLowerCase(), ep]));
  const find = (address: string) => byAddress.get(address.toLowerCase());
  return {
    all: entryPoints,
    find,
    get(address) {
      const entryPoint = find(address);
      if (!entryPoint) {
        throw new UnsupportedEntryPointError(
          address,
          entryPoints.map((ep) => ep.address),
        );
      }
      return entryPoint;
    },
  };
}
