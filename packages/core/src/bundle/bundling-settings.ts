import type { Address } from "viem";

/** How bundling starts: on a timer, on demand, or pulled by a sequencer. */
export type BundlingMode = "auto" | "manual" | "pull";

/** What goes into a bundle, how often, and who is paid. */
export interface BundlingSettings {
  /**
   * How bundling starts (run-time state: `Bundler.bundling` changes it). `auto` bundles every
   * `intervalMs`; `manual` only on `sendBundleNow`; `pull` never pushes: a sequencer pulls bundles
   * with `proposeBundle`, and committed ones are reported `preconfirmed`. Default `auto`.
   */
  readonly mode: BundlingMode;
  /** Milliseconds between automatic bundle attempts, at start (run-time state). Default 1000. */
  readonly intervalMs: number;
  /** Most operations per bundle, a cap besides gas. Default 1000. */
  readonly maxOperations: number;
  /**
   * Most operation gas per bundle (the sum of each operation's limits, as `handleOps` may spend
   * them). Default: what fits the chain's block gas limit with `gasLimitMarkupPercent` on top.
   */
  readonly maxGas: bigint | undefined;
  /** Percent added to a bundle's `eth_estimateGas` for its transaction's gas limit. Default 20. */
  readonly gasLimitMarkupPercent: number;
  /** No bundle bids more than this per gas (wei), however long it waits, besides what its operations repay. Default none. */
  readonly maxFeePerGas: bigint | undefined;
  /** Receives the bundle's fee refunds. Default: the relayer that sends the bundle. */
  readonly beneficiary: Address | undefined;
  /**
   * At most one operation per sender in a bundle (as ERC-7562 expects of unstaked senders). With
   * `false`, one sender's operations on parallel nonce keys, or consecutive nonces, share a bundle.
   * Default true.
   */
  readonly uniqueSenders: boolean;
  /** Most bytes of `handleOps` calldata in one bundle (ERC-7562 LIM-040). Default 262,144. */
  readonly maxCalldataBytes: number;
  /** Most bytes of paymaster `context`, summed over a bundle's operations (LIM-050). Default 65,536. */
  readonly maxContextBytes: number;
  /** Bundle transactions carry an EIP-2930 access list from `eth_createAccessList`. Default false. */
  readonly accessList: boolean;
  /**
   * Send bundles without simulating `handleOps` first: failing operations are not dropped
   * beforehand, and the gas limit is the sum of the operations' own limits. Default false.
   */
  readonly skipValidation: boolean;
  /** Milliseconds a claimed bundle may take before its operations return to the pool. Default 60,000. */
  readonly claimLeaseMs: number;
  /** Milliseconds a pulled bundle stays claimed without `commitBundle` or `releaseBundle`. Default 5,000. */
  readonly proposalLeaseMs: number;
  /** Milliseconds `sendBundleNow` waits for the bundles it sent to be mined. Default 60,000. */
  readonly receiptTimeoutMs: number;
}
