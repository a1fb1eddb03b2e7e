export * from "./config.ts";
export * from "./database-url.ts";
export * from "./logger.ts";
export * from "./paymaster-endpoint.ts";
export * from "./server.ts";
export * from "./service-process.ts";
export * from "./sponsorship/index.ts";
export * from "./service-redactor.ts";
