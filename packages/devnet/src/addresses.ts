import type { Address, Hex } from "viem";

/** ERC-4337 EntryPoint versions the devnet deploys; used as keys everywhere in this package. */
export type EntryPointVersion = "0.6" | "0.7" | "0.8" | "0.9";

/** All supported EntryPoint versions, oldest first, so callers can iterate deployments in a stable order. */
export const ENTRY_POINT_VERSIONS: readonly EntryPointVersion[] = ["0.6", "0.7", "0.8", "0.9"];

/**
 * The deterministic deployment proxy ("Arachnid CREATE2 deployer") that anvil pre-deploys.
 * Calling it with `salt ++ initCode` CREATE2-deploys `initCode`, which is how the canonical
 * mainnet addresses were produced, so deploying through it reproduces them locally.
 */
export const CREATE2_DEPLOYER: Address = "0x4e59b44847b379578588920ca78fbf26c0b4956c";

/** Where one EntryPoint version and its SimpleAccountFactory live on public networks, and the CREATE2 salts that put them there. */
export interface CanonicalDeployment {
  entryPoint: Address;
  entryPointSalt: Hex;
  simpleAccountFactory: Address;
  simpleAccountFactorySalt: Hex;
  /** v0.8+: the release's `Simple7702Account`, the delegate of EIP-7702 accounts (CREATE2, salt 0). */
  simple7702Account: Address | undefined;
}

export const ZERO_SALT: Hex = "0x0000000000000000000000000000000000000000000000000000000000000000";

/**
 * The canonical addresses of each EntryPoint and SimpleAccountFactory, as deployed on public chains.
 * The devnet reproduces exactly these addresses, so code and tests can use the same constants on
 * the devnet and on real networks.
 */
export const CANONICAL_DEPLOYMENTS: Readonly<Record<EntryPointVersion, CanonicalDeployment>> = {
  "0.6": {
    entryPoint: "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789",
    entryPointSalt: ZERO_SALT,
    simpleAccountFactory: "0x9406Cc6185a346906296840746125a0E44976454",
    simpleAccountFactorySalt: ZERO_SALT,
    simple7702Account: undefined,
  },
  "0.7": {
    entryPoint: "0x0000000071727De22E5E9d8BAf0edAc6f37da032",
    entryPointSalt: "0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3",
    simpleAccountFactory: "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985",
    simpleAccountFactorySalt: ZERO_SALT,
    simple7702Account: undefined,
  },
  "0.8": {
    entryPoint: "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108",
    entryPointSalt: "0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9",
    simpleAccountFactory: "0x13E9ed32155810FDbd067D4522C492D6f68E5944",
    simpleAccountFactorySalt: ZERO_SALT,
    simple7702Account: "0xe6Cae83BdE06E4c305530e199D7217f42808555B",
  },
  "0.9": {
    entryPoint: "0x433709009B8330FDa32311DF1C2AFA402eD8D009",
    entryPointSalt: "0x7702864008ddeab30aa67b7adc3d2653bc8d162714b1fe8fe4582df814f3bf61",
    simpleAccountFactory: "0xf4A7018FdBF22804526eC4b77DcE4f9b0D27a395",
    simpleAccountFactorySalt: ZERO_SALT,
    simple7702Account: "0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5",
  },
};

/**
 * Versions whose canonical creation code no npm release ships. `@account-abstraction/contracts`
 * has only 0.9.0-rc.1 for v0.9, whose code differs from the 0.9.0 deployed on public chains, so
 * CREATE2 cannot reproduce the canonical addresses. The devnet deploys the release candidate
 * and places its runtime code at the canonical addresses (see `deployErc4337Contracts`).
 */
export const PLACED_RELEASES: ReadonlySet<EntryPointVersion> = new Set(["0.9"]);

/**
 * `Simple7702Account` of EntryPoint v0.8, CREATE2-deployed with salt 0: the implementation that
 * viem's and permissionless's EIP-7702 simple accounts delegate to by default. (v0.9's:
 * `CANONICAL_DEPLOYMENTS["0.9"].simple7702Account`, viem's default for `entryPoint: "0.9"`.)
 */
export const SIMPLE_7702_ACCOUNT: Address = CANONICAL_DEPLOYMENTS["0.8"].simple7702Account!;
