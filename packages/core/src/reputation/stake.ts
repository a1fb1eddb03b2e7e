import { type Address, parseAbi } from "viem";
import { getAddress } from "../utils/get-address.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";

/** What ERC-7562 calls staked (SREP-010): enough stake, locked long enough. */
export interface StakeRequirement {
  /** Least stake, in wei. */
  readonly minStake: bigint;
  /** Least unstake delay, in seconds. */
  readonly minUnstakeDelaySeconds: number;
}

/** An entity's stake on one EntryPoint, as `getDepositInfo` reports it. */
export interface StakeStatus {
  address: Address;
  /** Wei locked as stake. */
  stake: bigint;
  /** Seconds the stake stays locked after `unlockStake`. */
  unstakeDelaySec: bigint;
  /** Whether the stake meets the requirement (and is not being withdrawn). */
  isStaked: boolean;
}

/** True when `stake` and `unstakeDelaySec` meet the requirement. */
export function isStaked(
  info: { stake: bigint; unstakeDelaySec: bigint },
  requirement: StakeRequirement,
): boolean {
  return (
    info.stake >= requirement.minStake &&
    info.unstakeDelaySec >= BigInt(requirement.minUnstakeDelaySeconds)
  );
}

// The same in every EntryPoint version (v0.6 declares `deposit` as uint112, which decodes alike).
const stakeManagerAbi = parseAbi([
  "struct DepositInfo { uint256 deposit; bool staked; uint112 stake; uint32 unstakeDelaySec; uint48 withdrawTime; }",
  "function getDepositInfo(address account) view returns (DepositInfo info)",
]);

/** Read `address`'s stake from the EntryPoint (`getDepositInfo`); an unlocking stake is not staked. */
export async function getStakeStatus(
  client: ChainClient,
  entryPoint: EntryPoint,
  address: Address,
  requirement: StakeRequirement,
): Promise<StakeStatus> {
  let info: { staked: boolean; stake: bigint; unstakeDelaySec: number };
  try {
    info = await client.readContract({
      address: entryPoint.address,
      abi: stakeManagerAbi,
      functionName: "getDepositInfo",
      args: [address],
    });
  } catch (error) {
    throw new InfrastructureError(
      `cannot read the stake of ${address}: ${(error as Error).message.split("\n")[0]}`,
      { cause: error },
    );
  }
  const stake = { stake: info.stake, unstakeDelaySec: BigInt(info.unstakeDelaySec) };
  return {
    address: getAddress(address),
    ...stake,
    isStaked: info.staked && isStaked(stake, requirement),
  };
}
