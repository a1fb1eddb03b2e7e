export * from "./codec.ts";
export * from "./hash.ts";
export * from "./max-cost.ts";
export * from "./pack.ts";
export * from "./types.ts";
export * from "./wire.ts";
