import { type Chain, defineChain } from "viem";

/** The viem `Chain` of a devnet: its id, ETH as currency, and its RPC URL. */
export function devnetChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: "devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}
