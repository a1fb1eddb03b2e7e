import type { ChainClient } from "@bundlekit/core";
import { startDevnet } from "@bundlekit/devnet";
import { Bundler, Chain, effectLogger, Relayers } from "@bundlekit/effect";
import { sqliteStores } from "@bundlekit/storage-kysely/effect";
import { NodeRuntime } from "@effect/platform-node";
import { Config, Effect, Layer, Option, Redacted } from "effect";
import { HttpServer } from "effect/http";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { backendLayer, bundlerPath } from "./backend.ts";

/**
 * The backend's settings, from the environment (the default `ConfigProvider`): `PORT` (default
 * 3000), `DATABASE` (the SQLite file, default `effect-backend.sqlite`), and `RPC_URL` with
 * `RELAYER_KEYS` (comma-separated) for a node of your own; without `RPC_URL`, the embedded devnet.
 */
const settings = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(3000)),
  database: Config.String("DATABASE").pipe(Config.withDefault("effect-backend.sqlite")),
  rpcUrl: Config.option(Config.Redacted("RPC_URL")),
});

/**
 * The node and the relayers: `RPC_URL` and the keys in `RELAYER_KEYS` (checked, never echoed), or
 * a devnet started with the program's scope and stopped with it, and its keys.
 */
const node = Effect.gen(function* () {
  const { rpcUrl } = yield* settings;
  if (Option.isSome(rpcUrl)) {
    return { rpcUrl: Redacted.value(rpcUrl.value), relayers: Relayers.layerConfig(Relayers.localKeys("RELAYER_KEYS")), devnet: false };
  }
  const devnet = yield* Effect.acquireRelease(
    Effect.tryPromise(() => startDevnet()),
    (started) => Effect.promise(() => started.stop()),
  );
  return { rpcUrl: devnet.rpcUrl, relayers: Relayers.layerAccounts(devnet.relayerKeys.map((key) => privateKeyToAccount(key))), devnet: true };
});

/** Prints where the routes are once the server listens. */
const announce = (devnet: boolean) =>
  Layer.effectDiscard(
    HttpServer.addressFormattedWith((origin) =>
      Effect.log(
        [
          `Effect backend${devnet ? " on the embedded devnet" : ""}`,
          `  own route:   GET ${origin}/hello`,
          `  JSON-RPC:    POST ${origin}${bundlerPath}, WebSocket ${origin.replace("http", "ws")}${bundlerPath}`,
          `  HttpApi:     POST ${origin}/eth_sendUserOperation, /eth_estimateUserOperationGas, …`,
          `  operations:  GET ${origin}/operations/<userOpHash>  (through the Bundler service)`,
        ].join("\n"),
      ),
    ),
  );

/**
 * `pnpm start`: the backend at `PORT`, its mempool and reputation in the SQLite file `DATABASE`.
 * Ctrl-C interrupts the program: the server stops accepting, the engine stops, the database
 * closes, the devnet stops.
 */
const app = Layer.unwrap(
  Effect.gen(function* () {
    const { port, database } = yield* settings;
    const { rpcUrl, relayers, devnet } = yield* node;
    const chain: ChainClient = createPublicClient({
      transport: http(rpcUrl),
      pollingInterval: 250,
    });
    const ports = Layer.mergeAll(
      Layer.succeed(Chain, chain),
      relayers,
      sqliteStores(database),
      effectLogger,
    );
    return announce(devnet).pipe(
      Layer.provideMerge(backendLayer({ port })),
      Layer.provide(Bundler.layer()),
      Layer.provide(ports),
    );
  }),
);

NodeRuntime.runMain(Layer.launch(app));
