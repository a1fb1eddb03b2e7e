import { mempoolStoreContract } from "@bundlekit/core/testing";
import { createPostgresMempoolStore } from "../src/index.ts";
import { onPostgresSchema } from "./backends.ts";

mempoolStoreContract("PostgreSQL", () => onPostgresSchema((pool) => createPostgresMempoolStore({ pool })));
