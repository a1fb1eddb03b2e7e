import { type Address, formatEther, multicall3Abi } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Logger } from "../ports/logger.ts";
import type { RelayerLease, RelayerSigner } from "../ports/relayer-signer.ts";

export interface LeaseFundedRelayerParameters {
  client: ChainClient;
  signer: RelayerSigner;
  logger: Logger;
  /** Least balance (wei) a relayer needs to be leased (`minSignerBalance`); 0 skips the check. */
  minSignerBalance: bigint;
  /** Multicall3 address used to read every relayer's balance in one call (`multicall`). */
  multicall: Address;
}

export interface LeaseFundedRelayerOptions {
  /** Relayers not to lease now (e.g. one the node just found short of funds for a bundle). */
  skip?: ReadonlySet<Address> | undefined;
}

/**
 * Lease an idle relayer whose balance is at least `minSignerBalance`, or undefined when none is.
 * Balances are read once per bundle, not per operation: through Multicall3's `getEthBalance` in
 * one `eth_call`, or one `eth_getBalance` per relayer where Multicall3 is not deployed. Relayers
 * found short are skipped with a warning and stay in the pool.
 */
export async function leaseFundedRelayer(
  parameters: LeaseFundedRelayerParameters,
  options: LeaseFundedRelayerOptions = {},
): Promise<RelayerLease | undefined> {
  const { signer, minSignerBalance, logger } = parameters;
  const skip = options.skip ?? new Set<Address>();
  const balances = minSignerBalance === 0n ? undefined : await readBalances(parameters.client, signer.addresses, parameters.multicall);
  const short: RelayerLease[] = [];
  try {
    for (let lease = signer.lease(); lease; lease = signer.lease()) {
      if (skip.has(lease.address)) {
        short.push(lease);
        continue;
      }
      if (!balances) return lease;
      const balance = balances.get(lease.address) ?? 0n;
      if (balance >= minSignerBalance) return lease;
      logger.warn("relayer balance below minSignerBalance; not used for bundles", {
        relayer: lease.address,
        balance: `${formatEther(balance)} eth`,
        minSignerBalance: `${formatEther(minSignerBalance)} eth`,
      });
      short.push(lease);
    }
    return undefined;
  } finally {
    for (const lease of short) lease.release();
  }
}

async function readBalances(
  client: ChainClient,
  addresses: readonly Address[],
  multicall: Address,
): Promise<Map<Address, bigint>> {
  let balances: readonly bigint[];
  try {
    balances = await client.multicall({
      multicallAddress: multicall,
      allowFailure: false,
      contracts: addresses.map(
        (address) =>
          ({
            address: multicall,
            abi: multicall3Abi,
            functionName: "getEthBalance",
            args: [address],
          }) as const,
      ),
    });
  } catch {
    // No Multicall3 at that address on this chain (or it failed): read the balances one by one.
    balances = await Promise.all(addresses.map((address) => client.getBalance({ address })));
  }
  return new Map(addresses.map((address, i) => [address, balances[i]!]));
}
