import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { Config, ConfigProvider, Effect, Exit, Layer, Option, Redacted } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineSettingNames } from "@bundlekit/core";
import { settingNames } from "../../server/src/config.ts";
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
      bundlingMode: "manual",
      bundleSize: "7",
      maxMempoolSize: 50,
      minStake: "0.5 eth",
      whitelistedPaymaster: "0x00000000000000000000000000000000000000Aa",
      rpcEndpointSubmit: submitUrl,
      tracerWorkers: 0,
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
      bundler: { rpcEndpointSubmit: submitUrl, instanceId: "x" },
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
      bundlerConfig.parse(ConfigProvider.fromUnknown({ bundleInterval: "5" })),
    );
    expect(Exit.isFailure(exit)).toBe(true);
    expect(String(exit)).toContain("bundleInterval must be");
  });

  it("reads the stand-alone service's variables: with a constant-case provider under BUNDLEKIT, every key is one of its settingNames, and every engine setting of the service is read", async () => {
    const asked = new Set<string>();
    const recording = ConfigProvider.make((path) => Effect.sync(() => void asked.add(path.join("_")))).pipe(ConfigProvider.constantCase, ConfigProvider.nested("BUNDLEKIT"));
    await Effect.runPromiseExit(bundlerConfig.parse(recording));
    const serviceNames = new Set(settingNames);
    expect([...asked].filter((name) => !serviceNames.has(name))).toEqual([]);
    const engineNames = Object.keys(engineSettingNames).map((key) => `BUNDLEKIT_${key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`);
    expect(engineNames.filter((name) => !asked.has(name))).toEqual([]);

    const env = { BUNDLEKIT_BUNDLE_SIZE: "7", BUNDLEKIT_USEROPS_TTL: "60", BUNDLEKIT_WHITELISTED_FACTORY: "0x00000000000000000000000000000000000000Aa" };
    const config = await Effect.runPromise(bundlerConfig.parse(ConfigProvider.fromEnv({ env }).pipe(ConfigProvider.constantCase, ConfigProvider.nested("BUNDLEKIT"))));
    expect(config.settings).toMatchObject({ bundling: { maxOperations: 7 }, mempool: { ttlSeconds: 60 }, reputation: { whitelistedEntities: { factory: ["0x00000000000000000000000000000000000000Aa"] } } });
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
