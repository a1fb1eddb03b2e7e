export * from "./kysely-mempool-store.ts";
export * from "./kysely-reputation-store.ts";
export * from "./migrations.ts";
export * from "./postgres.ts";
export type * from "./schema.ts";
export * from "./sqlite.ts";
export { DatabaseUnavailableError } from "./sqlite-file-guard.ts";
