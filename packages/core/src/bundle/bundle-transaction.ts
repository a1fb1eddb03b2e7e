import { minOf } from "../utils/bigint-math.ts";
import type { Bundle } from "./build-bundle.ts";
import type { BundleFees } from "./bundle-fees.ts";

export interface BundleTransactionOptions {
  chainId: number;
  fees: BundleFees;
  /** Percent added to the bundle's gas for the transaction's gas limit (`bundling.gasLimitMarkupPercent`). */
  gasLimitMarkupPercent: number;
  /** Most gas the transaction may use: the block's gas limit, or the sequencer's gas budget. */
  maxGas: bigint;
}

/**
 * The transaction that carries `bundle`, all but its nonce: the `handleOps` call, its gas with
 * `gasLimitMarkupPercent` (within `maxGas`), `fees`, the access list when the bundle has one
 * (`bundling.accessList`), and the operations' EIP-7702 authorizations (then type 4). The one shape both the
 * push path (sent) and the pull path (proposed) sign.
 */
export function bundleTransaction(bundle: Bundle, options: BundleTransactionOptions) {
  const withMarkup = (bundle.gas * (100n + BigInt(options.gasLimitMarkupPercent))) / 100n;
  return {
    chainId: options.chainId,
    to: bundle.entryPoint.address,
    data: bundle.data,
    gas: minOf(withMarkup, options.maxGas),
    ...options.fees,
    ...(bundle.accessList ? { accessList: bundle.accessList } : {}),
    ...(bundle.authorizationList.length > 0
      ? { type: "eip7702" as const, authorizationList: bundle.authorizationList }
      : { type: "eip1559" as const }),
  };
}
