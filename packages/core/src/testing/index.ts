export * from "./fixtures.ts";
export * from "./memory-mempool-store.ts";
export * from "./mempool-store-contract.ts";
