// @bundlekit/storage-kysely/effect: the SQLite and PostgreSQL stores as layers of @bundlekit/effect's
// store services. Its own entry, so that apps on the Promise API never load Effect, and
// @bundlekit/effect never loads a database driver. Named exports only.
import { MempoolStorage, PreconfirmationStorage, ReputationStorage } from "@bundlekit/effect";
import { Context, Data, Effect, Layer } from "effect";
import type { KyselyStores } from "./kysely-stores.ts";
import { createPostgresStores, type PostgresMempoolStoreOptions } from "./postgres.ts";
import { createSqliteStores, type SqliteMempoolStoreOptions } from "./sqlite.ts";

export type { PostgresMempoolStoreOptions, SqliteMempoolStoreOptions };

/**
 * The stores could not be opened: the database cannot be reached or opened, or its schema cannot
 * be migrated. `database` names it (a PostgreSQL URL without its password); `cause` is the
 * database's own error.
 */
export class StoreOpenFailed extends Data.TaggedError("StoreOpenFailed")<{
  readonly database: string;
  readonly message: string;
  readonly cause: unknown;
}> {}

/** What the store layers provide. */
export type StoreServices = MempoolStorage | ReputationStorage | PreconfirmationStorage;

/**
 * Mempool, reputation and preconfirmations in one SQLite file (`":memory:"` keeps nothing), on one connection,
 * opened with the layer's scope and closed on release. The schema is migrated once, safely even
 * when other processes open the same new file at once.
 */
export const sqliteStores = (
  filename: string,
  options: Omit<SqliteMempoolStoreOptions, "filename"> = {},
): Layer.Layer<StoreServices, StoreOpenFailed> =>
  storesLayer(filename, () => createSqliteStores({ ...options, filename }));

/**
 * Mempool, reputation and preconfirmations in PostgreSQL (shared by every engine on the database), on one pool,
 * opened with the layer's scope and ended on release. Takes a connection string, or the options
 * of `createPostgresStores` (a `pool` of your own, which release ends).
 */
export const postgresStores = (
  connection: string | PostgresMempoolStoreOptions,
): Layer.Layer<StoreServices, StoreOpenFailed> => {
  const options = typeof connection === "string" ? { connectionString: connection } : connection;
  const database =
    "connectionString" in options ? withoutPassword(options.connectionString) : "a PostgreSQL pool";
  return storesLayer(database, () => createPostgresStores(options));
};

/** Both stores from `open`, as services, for the layer's scope. A failure to close on release is logged. */
const storesLayer = (
  database: string,
  open: () => Promise<KyselyStores>,
): Layer.Layer<StoreServices, StoreOpenFailed> =>
  Layer.effectContext(
    Effect.acquireRelease(
      Effect.tryPromise({
        try: open,
        catch: (cause) =>
          new StoreOpenFailed({
            database,
            message: `cannot open the stores on ${database}: ${firstLine(cause)}`,
            cause,
          }),
      }),
      (stores) =>
        Effect.tryPromise(() => stores.close()).pipe(
          Effect.catch((error) =>
            Effect.logWarning(
              `closing the stores on ${database} failed: ${firstLine(error.cause)}`,
            ),
          ),
        ),
    ).pipe(
      Effect.map((stores) =>
        Context.make(MempoolStorage, stores.mempool).pipe(
          Context.add(ReputationStorage, stores.reputation),
          Context.add(PreconfirmationStorage, stores.preconfirmations),
        ),
      ),
    ),
  );

/** The first line of an error's message, else its code (`ECONNREFUSED`), else its name. */
function firstLine(error: unknown): string {
  const { message, code, name } = (error ?? {}) as {
    message?: unknown;
    code?: unknown;
    name?: unknown;
  };
  const line = typeof message === "string" ? message.split("\n", 1)[0] : undefined;
  return (
    line ||
    (typeof code === "string" ? code : undefined) ||
    (typeof name === "string" ? name : String(error))
  );
}

/** A PostgreSQL URL as it may be printed: without its password. */
function withoutPassword(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "PostgreSQL";
  }
}
