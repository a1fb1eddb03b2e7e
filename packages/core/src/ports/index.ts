export * from "./chain-client.ts";
export * from "./clock.ts";
export * from "./logger.ts";
export * from "./mempool-store.ts";
export * from "./relayer-signer.ts";
export * from "./reputation-store.ts";
export * from "./submitter.ts";
export * from "./mempool-policy.ts";
