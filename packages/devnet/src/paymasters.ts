import {
  type Abi,
  type Address,
  type Client,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  keccak256,
  stringToHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { readContract } from "viem/actions";
import postOpWork07 from "./artifacts/PostOpWorkPaymaster.v0.7.json" with { type: "json" };
import postOpWork08 from "./artifacts/PostOpWorkPaymaster.v0.8.json" with { type: "json" };
import postOpWork09 from "./artifacts/PostOpWorkPaymaster.v0.9.json" with { type: "json" };
import verifying08 from "./artifacts/VerifyingPaymaster.v0.8.json" with { type: "json" };
import verifying09 from "./artifacts/VerifyingPaymaster.v0.9.json" with { type: "json" };
import type { EntryPointVersion } from "./addresses.ts";
import { type ContractArtifact, loadArtifact } from "./artifacts.ts";

/**
 * The key that signs for the devnet's verifying paymasters. It is public: never trust it, or a
 * paymaster it signs for, on a real network.
 */
export const DEVNET_PAYMASTER_SIGNER_KEY: Hex = keccak256(stringToHex("bundlekit devnet verifying paymaster signer"));

/** The paymasters the devnet deploys for one EntryPoint version, funded with a deposit. */
export interface DevnetPaymasters {
  /** The EntryPoint samples' verifying paymaster: it pays for what `DEVNET_PAYMASTER_SIGNER_KEY` signed. */
  verifying: Address;
  /**
   * v0.7+: pays for every operation; its postOp does work that grows with the context
   * (`paymasterData` = a uint32 number of hashing rounds). Staked.
   */
  postOpWork: Address | undefined;
}

/** What each devnet paymaster holds on its EntryPoint. */
export const PAYMASTER_DEPOSIT = 10n ** 19n; // 10 ETH
export const PAYMASTER_STAKE = 10n ** 18n; // 1 ETH
export const PAYMASTER_UNSTAKE_DELAY = 86_400;

const ownArtifacts = {
  verifying: { "0.8": verifying08 as ContractArtifact, "0.9": verifying09 as ContractArtifact },
  postOpWork: { "0.7": postOpWork07 as ContractArtifact, "0.8": postOpWork08 as ContractArtifact, "0.9": postOpWork09 as ContractArtifact },
};

/** The verifying paymaster's artifact: the samples' for v0.6/v0.7, the devnet's own build for v0.8+. */
function verifyingArtifact(version: EntryPointVersion): ContractArtifact {
  return version === "0.6" || version === "0.7" ? loadArtifact(version, "VerifyingPaymaster") : ownArtifacts.verifying[version];
}

/** The creation code of each paymaster of `version` (deployed through the CREATE2 deployer with salt 0). */
export function paymasterInitCodes(
  version: EntryPointVersion,
  entryPoint: Address,
  owner: Address,
): { verifying: { artifact: ContractArtifact; initCode: Hex }; postOpWork: { artifact: ContractArtifact; initCode: Hex } | undefined } {
  const signer = privateKeyToAccount(DEVNET_PAYMASTER_SIGNER_KEY).address;
  const verifyingArgs = version === "0.6" || version === "0.7" ? [entryPoint, signer] : [entryPoint, signer, owner];
  const withArgs = (artifact: ContractArtifact, args: readonly unknown[]) => {
    const inputs = (artifact.abi as Abi).find((item) => item.type === "constructor")!.inputs;
    return { artifact, initCode: concat([artifact.bytecode, encodeAbiParameters(inputs, args)]) };
  };
  return {
    verifying: withArgs(verifyingArtifact(version), verifyingArgs),
    postOpWork: version === "0.6" ? undefined : withArgs(ownArtifacts.postOpWork[version], [entryPoint, owner]),
  };
}

/** `addStake(uint32)` of a paymaster, sent by its owner. */
export const addStakeCall = (unstakeDelaySec: number): Hex =>
  encodeFunctionData({
    abi: [{ type: "function", name: "addStake", inputs: [{ type: "uint32" }], outputs: [], stateMutability: "payable" }],
    functionName: "addStake",
    args: [unstakeDelaySec],
  });

export interface VerifyingPaymasterDataParameters {
  /** A client of the devnet. */
  client: Client;
  version: EntryPointVersion;
  paymaster: Address;
  /** The operation to sponsor, with its gas limits (v0.7+: also the paymaster's) as they will be sent. */
  userOperation: UserOperation;
  /** Unix seconds; 0 = no end. Default 0. */
  validUntil?: number;
  validAfter?: number;
  /** Default: `DEVNET_PAYMASTER_SIGNER_KEY`; another key makes a signature the paymaster refuses. */
  signerKey?: Hex;
}

/**
 * The paymaster data with which a devnet verifying paymaster sponsors `userOperation`: the hash
 * is the paymaster's own `getHash`, signed as a personal message. v0.6: the whole
 * `paymasterAndData`; v0.7+: `paymasterData` (the gas limits travel in their own fields), the
 * validity range (64 bytes) then the signature. On v0.9 the signature may instead travel as the
 * operation's `paymasterSignature`, leaving the range as `paymasterData`: `getHash` covers neither.
 */
export async function verifyingPaymasterData(parameters: VerifyingPaymasterDataParameters): Promise<Hex> {
  const { client, version, paymaster, userOperation: op, validUntil = 0, validAfter = 0 } = parameters;
  const times = encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [validUntil, validAfter]);
  const stub = `0x${"00".repeat(65)}` as Hex;
  const abi = verifyingArtifact(version).abi;
  const opForHash =
    version === "0.6"
      ? { ...op, paymasterAndData: concat([paymaster, times, stub]) }
      : toPackedUserOperation({ ...op, paymaster, paymasterData: concat([times, stub]) } as UserOperation);
  const hash = (await readContract(client, {
    address: paymaster,
    abi,
    functionName: "getHash",
    args: [opForHash, validUntil, validAfter],
  })) as Hex;
  const signature = await privateKeyToAccount(parameters.signerKey ?? DEVNET_PAYMASTER_SIGNER_KEY).signMessage({ message: { raw: hash } });
  return version === "0.6" ? concat([paymaster, times, signature]) : concat([times, signature]);
}

/** How `pnpm devnet` and `pnpm start` list a version's paymasters (and, from v0.8, its Simple7702Account). */
export function paymasterLines(deployment: {
  version: EntryPointVersion;
  paymasters: DevnetPaymasters;
  simple7702Account: Address | undefined;
}): string[] {
  const { version, paymasters, simple7702Account } = deployment;
  return [
    `VerifyingPaymaster v${version}:    ${paymasters.verifying}  (signed by the devnet paymaster key)`,
    ...(paymasters.postOpWork ? [`PostOpWorkPaymaster v${version}:   ${paymasters.postOpWork}  (sponsors all; postOp work = uint32 paymasterData)`] : []),
    ...(simple7702Account ? [`Simple7702Account v${version}:     ${simple7702Account}  (EIP-7702 delegate)`] : []),
  ];
}
