import { createRequire } from "node:module";
import type { Abi, Hex } from "viem";
import type { EntryPointVersion } from "./addresses.ts";

/**
 * The npm (alias) package that ships each version's compiled contracts.
 * This is the only place the package names appear: renaming an alias is a one-line change here.
 */
const ARTIFACT_PACKAGES: Record<EntryPointVersion, string> = {
  "0.6": "account-abstraction-v06",
  "0.7": "account-abstraction-v07",
  "0.8": "account-abstraction-v08",
  // 0.9.0-rc.1: the only npm release of v0.9 (see `PLACED_RELEASES`).
  "0.9": "account-abstraction-v09",
};

/** The contracts this package deploys or inspects. */
export type ContractName =
  | "EntryPoint"
  | "SimpleAccountFactory"
  | "SimpleAccount"
  /** v0.8+: the EIP-7702 delegate of viem's and permissionless's 7702 accounts. */
  | "Simple7702Account"
  /** v0.6 and v0.7 only (the v0.8 and v0.9 releases ship no samples; the devnet builds its own). */
  | "VerifyingPaymaster";

/** The parts of a Hardhat artifact the devnet uses: ABI, creation code and runtime code. */
export interface ContractArtifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

const require = createRequire(import.meta.url);
const cache = new Map<string, ContractArtifact>();

/**
 * Loads the compiled artifact of `name` from the official `@account-abstraction/contracts` release
 * for `version`. Deploying these exact bytes is what makes the canonical CREATE2 addresses come out.
 */
export function loadArtifact(version: EntryPointVersion, name: ContractName): ContractArtifact {
  const specifier = `${ARTIFACT_PACKAGES[version]}/artifacts/${name}.json`;
  let artifact = cache.get(specifier);
  if (artifact === undefined) {
    const json = require(specifier) as ContractArtifact;
    artifact = {
      contractName: json.contractName,
      abi: json.abi,
      bytecode: json.bytecode,
      deployedBytecode: json.deployedBytecode,
    };
    cache.set(specifier, artifact);
  }
  return artifact;
}
