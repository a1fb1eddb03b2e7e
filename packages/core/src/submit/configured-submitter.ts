import { type Address, createPublicClient, http, type Transport, webSocket } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Submitter } from "../ports/submitter.ts";
import { createClassicSubmitter } from "./classic-submitter.ts";
import { createConditionalSubmitter } from "./conditional-submitter.ts";

/**
 * How bundles reach the chain (see docs/configuration.md):
 * - `classic`: `eth_sendRawTransaction`;
 * - `conditional`: `eth_sendRawTransactionConditional` (ERC-7796) with `knownAccounts` holding
 *   each sender's storage root, so the node drops the bundle instead of mining a revert when a
 *   sender's state changed after the bundle was built.
 * Both go to `submitUrl` when it is set, else to the node the engine reads from.
 */
export type RelayingMode = "classic" | "conditional";

export const relayingModes: readonly RelayingMode[] = ["classic", "conditional"];

/** How bundles reach the chain, and the relayers that send them (see docs/configuration.md). */
export interface RelayingSettings {
  /**
   * `classic` or `conditional`. With a custom `submitter` passed to `createBundler`, the engine
   * reports that submitter's name here. Default `classic`.
   */
  readonly mode: RelayingMode | (string & {});
  /** A separate node URL that only receives bundle transactions. A secret (URLs carry API keys). Default unset. */
  readonly submitUrl: string | undefined;
  /** Relayers whose balance (wei) is below this are not leased for bundles. Default 0.1 ETH. */
  readonly minSignerBalance: bigint;
  /** Address of Multicall3; relayer balances are read through it in one call. Default the canonical deployment. */
  readonly multicall: Address;
}

/** viem's transport for `submitUrl`, with viem's default timeout; over HTTP a send is not retried. */
const defaultSubmitTransport = (url: string): Transport => (url.startsWith("ws") ? webSocket(url) : http(url, { retryCount: 0 }));

/**
 * The submitter `mode` names. Transactions go to `submitUrl` over its own viem
 * transport when it is set (e.g. a sequencer or a private relay; `transport` makes it, e.g. with
 * the service's node timeouts), else to `client`'s node; reads (e.g. the conditional mode's
 * storage roots) always use `client`.
 */
export function createConfiguredSubmitter(
  client: ChainClient,
  settings: Pick<RelayingSettings, "mode" | "submitUrl">,
  transport: (url: string) => Transport = defaultSubmitTransport,
): Submitter {
  const url = settings.submitUrl;
  const submitClient: ChainClient = url ? (createPublicClient({ transport: transport(url) }) as ChainClient) : client;
  return settings.mode === "conditional"
    ? createConditionalSubmitter(client, submitClient)
    : createClassicSubmitter(submitClient);
}
