export * from "./bundler.ts";
export * from "./clock.ts";
export * from "./errors.ts";
export * from "./logger.ts";
export * from "./ports.ts";
export * from "./stores.ts";
