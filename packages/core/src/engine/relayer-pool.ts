import type { Address } from "viem";
import type { RelayerLease } from "../ports/relayer-signer.ts";
import { type LeaseFundedRelayerParameters, leaseFundedRelayer } from "../submit/lease-funded-relayer.ts";

/** The relayers bundles may use now, and a way to wait for one. */
export interface RelayerPool {
  /** A funded idle relayer (not one of `skip`), or undefined when none is. Its `release` wakes those waiting. */
  lease(skip?: ReadonlySet<Address>): Promise<RelayerLease | undefined>;
  /** Relayers leased and not yet released. */
  readonly held: number;
  /** Resolves at the next release (or `wakeAll`). */
  released(): Promise<void>;
  /** Wake everyone waiting, e.g. when the engine stops. */
  wakeAll(): void;
}

/**
 * Leases relayers for bundles. A relayer stays leased from its bundle's send until its nonce is
 * settled on chain, so it never queues a new bundle behind a pending one.
 */
export function createRelayerPool(parameters: LeaseFundedRelayerParameters): RelayerPool {
  let held = 0;
  let waiters: (() => void)[] = [];
  const wakeAll = () => {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  return {
    async lease(skip) {
      const lease = await leaseFundedRelayer(parameters, { skip });
      if (!lease) return undefined;
      held++;
      let released = false;
      return {
        address: lease.address,
        signTransaction: (transaction) => lease.signTransaction(transaction),
        release() {
          if (released) return;
          released = true;
          lease.release();
          held--;
          wakeAll();
        },
      };
    },
    get held() {
      return held;
    },
    released: () => new Promise<void>((resolve) => waiters.push(resolve)),
    wakeAll,
  };
}
