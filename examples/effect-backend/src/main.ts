import { startDevnet } from "@bundlekit/devnet";
import { Bundler, Chain, effectLogger, Relayers } from "@bundlekit/effect";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { sqliteStores } from "@bundlekit/storage-kysely/effect";
import { NodeRuntime } from "@effect/platform-node";
import { Effect, Layer } from "effect";
import { HttpServer } from "effect/http";
import { createPublicClient, type Hex, http } from "viem";
import { backendLayer, bundlerPath } from "./backend.ts";

/**
 * `pnpm start`: the backend on the embedded devnet (or on RPC_URL with RELAYER_KEYS), at PORT
 * (default 3000), its mempool and reputation in the SQLite file DATABASE (default
 * `effect-backend.sqlite`). Ctrl-C closes the program's scope: the server stops accepting, the
 * engine stops, the database closes, the devnet stops.
 */
const program = Effect.gen(function* () {
  const devnet = process.env.RPC_URL
    ? undefined
    : yield* Effect.acquireRelease(
        Effect.promise(() => startDevnet()),
        (started) => Effect.promise(() => started.stop()),
      );
  const rpcUrl = process.env.RPC_URL ?? devnet!.rpcUrl;
  const relayerKeys = process.env.RELAYER_KEYS ? (process.env.RELAYER_KEYS.split(",") as Hex[]) : devnet!.relayerKeys;
  const ports = Layer.mergeAll(
    Layer.succeed(Chain, createPublicClient({ transport: http(rpcUrl), pollingInterval: 250 }) as never),
    Layer.succeed(Relayers, createLocalKeySigner(relayerKeys)),
    sqliteStores(process.env.DATABASE ?? "effect-backend.sqlite"),
    effectLogger,
  );
  const backend = backendLayer({ port: Number(process.env.PORT ?? 3000) }).pipe(Layer.provide(Bundler.layer()), Layer.provide(ports));
  yield* Layer.build(backend).pipe(
    Effect.flatMap((context) =>
      HttpServer.addressFormattedWith((origin) =>
        Effect.sync(() =>
          process.stdout.write(
            [
              `Effect backend${devnet ? " on the embedded devnet" : ""}`,
              `  own route:   GET ${origin}/hello`,
              `  JSON-RPC:    POST ${origin}${bundlerPath}`,
              `  operations:  GET ${origin}/operations/<userOpHash>  (through the Bundler service)`,
              "Press Ctrl-C to stop.",
              "",
            ].join("\n"),
          ),
        ),
      ).pipe(Effect.provide(context)),
    ),
  );
  return yield* Effect.never;
});

NodeRuntime.runMain(Effect.scoped(program));
