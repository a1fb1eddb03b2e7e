import { startDevnet } from "@bundlekit/devnet";
import { BundlerService, ChainClientService, effectLogger, memoryStores, RelayerSignerService } from "@bundlekit/effect";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { NodeRuntime } from "@effect/platform-node";
import { Effect, Layer } from "effect";
import { HttpServer } from "effect/http";
import { createPublicClient, type Hex, http } from "viem";
import { backendLayer, bundlerPath } from "./backend.ts";

/**
 * `pnpm start`: the backend on the embedded devnet (or on RPC_URL with RELAYER_KEYS), at PORT
 * (default 3000). Ctrl-C closes the program's scope: the server stops accepting, the engine
 * stops, the devnet stops.
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
    Layer.succeed(ChainClientService, createPublicClient({ transport: http(rpcUrl), pollingInterval: 250 }) as never),
    Layer.succeed(RelayerSignerService, createLocalKeySigner(relayerKeys)),
    memoryStores,
    effectLogger,
  );
  const backend = backendLayer({ port: Number(process.env.PORT ?? 3000) }).pipe(Layer.provide(BundlerService.layer()), Layer.provide(ports));
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
