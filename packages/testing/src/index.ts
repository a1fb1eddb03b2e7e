export * from "./fixtures.ts";
export * from "./memory-mempool-store.ts";
export * from "./mempool-policy-contract.ts";
export * from "./mempool-store-contract.ts";
export * from "./memory-reputation-store.ts";
export * from "./reputation-store-contract.ts";
export * from "./seeded-random.ts";
