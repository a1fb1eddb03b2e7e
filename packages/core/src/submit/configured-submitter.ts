import { createPublicClient, http, webSocket } from "viem";
import type { BundlerConfig } from "../engine/config.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Submitter } from "../ports/submitter.ts";
import { createClassicSubmitter } from "./classic-submitter.ts";
import { createConditionalSubmitter } from "./conditional-submitter.ts";

/**
 * The submitter `relayingMode` names. Transactions go to `rpcEndpointSubmit` over its own viem
 * transport when it is set (e.g. a sequencer or a private relay), else to `client`'s node; reads
 * (e.g. the conditional mode's storage roots) always use `client`.
 */
export function createConfiguredSubmitter(
  client: ChainClient,
  config: Pick<BundlerConfig, "relayingMode" | "rpcEndpointSubmit">,
): Submitter {
  const url = config.rpcEndpointSubmit;
  const submitClient: ChainClient = url
    ? (createPublicClient({
        transport: url.startsWith("ws") ? webSocket(url) : http(url, { retryCount: 0 }),
      }) as ChainClient)
    : client;
  return config.relayingMode === "conditional"
    ? createConditionalSubmitter(client, submitClient)
    : createClassicSubmitter(submitClient);
}
