import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";

/** The stand-alone service serves `debug_bundler_*` only when told to. */
describe("debug methods in the stand-alone service", () => {
  let devnet: Devnet;
  const services: BundlerService[] = [];

  beforeAll(async () => {
    devnet = await startDevnet();
  });

  afterAll(async () => {
    for (const service of services) await service.close();
    await devnet?.stop();
  });

  async function start(env: Record<string, string> = {}) {
    const config = loadConfig({
      BUNDLEKIT_RPC_URL: devnet.rpcUrl,
      BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
      BUNDLEKIT_PORT: "0",
      BUNDLEKIT_DATABASE: ":memory:",
      BUNDLEKIT_METRICS: "false",
      ...env,
    });
    const service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl });
    services.push(service);
    return service;
  }

  async function rpc(service: BundlerService, method: string, params: unknown[] = []) {
    const response = await fetch(service.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await response.json()) as {
      result?: unknown;
      error?: { code: number; message: string };
    };
  }

  it("answers -32601 for debug methods by default, exactly like an unknown method", async () => {
    const service = await start();
    const unknown = await rpc(service, "debug_bundler_noSuchThing");
    expect(unknown.error?.code).toBe(-32601);
    for (const method of [
      "debug_bundler_clearState",
      "debug_bundler_dumpMempool",
      "debug_bundler_setReputation",
    ]) {
      expect(await rpc(service, method)).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32601,
          message: unknown.error!.message.replace("debug_bundler_noSuchThing", method),
        },
      });
    }
  });

  it("serves them with BUNDLEKIT_DEBUG_METHODS=true, reputation included", async () => {
    const service = await start({ BUNDLEKIT_DEBUG_METHODS: "true" });
    const entryPoint = devnet.deployments["0.7"].entryPoint;
    const address = "0x1111111111111111111111111111111111111111";
    expect(
      (
        await rpc(service, "debug_bundler_setReputation", [
          [{ address, opsSeen: "0x3e8", opsIncluded: "0x0" }],
          entryPoint,
        ])
      ).result,
    ).toBe("ok");
    expect((await rpc(service, "debug_bundler_dumpReputation", [entryPoint])).result).toEqual([
      { address, opsSeen: "0x3e8", opsIncluded: "0x0", status: "0x2" },
    ]);
    expect((await rpc(service, "debug_bundler_clearState")).result).toBe("ok");
    expect((await rpc(service, "debug_bundler_dumpReputation", [entryPoint])).result).toEqual([]);
  });

  it("serves them in testing mode", async () => {
    const service = await start({ BUNDLEKIT_TESTING_MODE: "true" });
    expect((await rpc(service, "debug_bundler_setBundlingMode", ["manual"])).result).toBe("ok");
    expect(service.bundler.bundling.mode).toBe("manual");
  });

  it("refuses a debugMethods setting that is not a boolean, naming it", () => {
    expect(() => loadConfig({ BUNDLEKIT_DEBUG_METHODS: "yes" })).toThrow(ConfigError);
    expect(() => loadConfig({ BUNDLEKIT_DEBUG_METHODS: "yes" })).toThrow(/debugMethods/);
  });
});
