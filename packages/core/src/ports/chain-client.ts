import type { Chain, PublicClient, Transport } from "viem";

/**
 * Read access to the chain: a viem `PublicClient` over any EIP-1193 transport (http, webSocket,
 * fallback). The engine only reads and simulates through it; sending goes through `Submitter`.
 */
export type ChainClient = PublicClient<Transport, Chain | undefined>;
