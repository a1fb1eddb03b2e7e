export * from "./simulated-chain.ts";
export * from "./simulated-clock.ts";
