import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { Config, ConfigProvider, Effect, Exit, Layer, Option, Redacted } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bundler } from "../src/bundler.ts";
import { bundlerConfig } from "../src/config.ts";
import { Chain, Relayers } from "../src/ports.ts";
import { memoryStores } from "../src/stores.ts";

/** The engine from the program's ConfigProvider alone: settings, secrets `Redacted`, the ports' layers from config. */
describe("Config", () => {
  let devnet: Devnet;
  beforeAll(async () => {
    devnet = await startDevnet();
  });
  afterAll(() => devnet?.stop());

  const submitUrl = "https://relay.example.org/v1/secret-api-key";
  const configured = (bundler: Record<string, unknown>) =>
    ConfigProvider.fromUnknown({
      rpcUrl: devnet.rpcUrl,
      relayerKeys: devnet.relayerKeys.join(","),
      instanceId: "effect-1",
      ...bundler,
    });

  it("Bundler.layerConfig, Chain.layerConfig and Relayers.layerConfig(): a program provides a ConfigProvider, and the engine runs with its settings", async () => {
    const provider = configured({
      bundling: { mode: "manual", maxOperations: "7" },
      mempool: { maxSize: 50 },
      reputation: {
        minStake: "0.5 eth",
        whitelistedEntities: { paymaster: "0x00000000000000000000000000000000000000Aa" },
      },
      relaying: { submitUrl },
      validation: { tracerWorkers: 0 },
    });
    const layer = Bundler.layerConfig().pipe(
      Layer.provide(Layer.mergeAll(Chain.layerConfig, Relayers.layerConfig(), memoryStores)),
    );
    const program = Effect.gen(function* () {
      const { engine } = yield* Bundler;
      return { settings: engine.settings, chainId: engine.chainId, relayers: engine.relayers };
    });
    const result = await Effect.runPromise(
      program.pipe(Effect.provide(layer), Effect.provide(ConfigProvider.layer(provider))),
    );
    expect(result.chainId).toBe(devnet.chain.id);
    expect(result.relayers.length).toBe(devnet.relayerKeys.length);
    expect(result.settings.bundling).toMatchObject({
      mode: "manual",
      maxOperations: 7,
      intervalMs: 1000,
    });
    expect(result.settings.mempool.maxSize).toBe(50);
    expect(result.settings.reputation.minStake).toBe(500_000_000_000_000_000n);
    expect(result.settings.reputation.whitelistedEntities.paymaster).toEqual([
      "0x00000000000000000000000000000000000000Aa",
    ]);
    expect(result.settings.relaying.submitUrl).toBe(submitUrl);
  });

  it("keeps the submit URL Redacted in what it reads, and takes a nested prefix", async () => {
    const provider = ConfigProvider.fromUnknown({
      bundler: { relaying: { submitUrl }, instanceId: "x" },
    });
    const config = await Effect.runPromise(
      bundlerConfig.pipe(Config.nested("bundler")).parse(provider),
    );
    expect(Option.map(config.submitUrl, Redacted.value)).toEqual(Option.some(submitUrl));
    expect(JSON.stringify(config)).not.toContain("secret-api-key");
    expect(String(Option.getOrThrow(config.submitUrl))).not.toContain("secret-api-key");
    expect(config.instanceId).toEqual(Option.some("x"));
  });

  it("a setting out of range fails with a ConfigError naming it, by the engine's own rule", async () => {
    const exit = await Effect.runPromiseExit(
      bundlerConfig.parse(ConfigProvider.fromUnknown({ bundling: { intervalMs: "5" } })),
    );
    expect(Exit.isFailure(exit)).toBe(true);
    expect(String(exit)).toContain("bundling.intervalMs");
  });

  it("a bad relayer key fails Relayers.layerConfig() with a ConfigError that does not echo the key", async () => {
    const key = `0x${"00".repeat(32)}`;
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        yield* Relayers;
      }).pipe(
        Effect.provide(Relayers.layerConfig()),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ relayerKeys: key }))),
      ),
    );
    expect(Exit.isFailure(exit)).toBe(true);
    expect(String(exit)).toContain("relayerKeys");
    expect(String(exit)).not.toContain(key);
  });
});
