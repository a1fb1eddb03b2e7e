import { preconfirmationStoreContract } from "@bundlekit/testing";
import { createPostgresPreconfirmationStore, createSqlitePreconfirmationStore } from "../src/index.ts";
import { onPostgresSchema, onSqliteFile } from "./backends.ts";

preconfirmationStoreContract("SQLite file", () => onSqliteFile((filename) => createSqlitePreconfirmationStore({ filename })));

preconfirmationStoreContract("SQLite :memory:", async () => ({ store: await createSqlitePreconfirmationStore({ filename: ":memory:" }) }));

preconfirmationStoreContract("PostgreSQL", () => onPostgresSchema((pool) => createPostgresPreconfirmationStore({ pool })));
