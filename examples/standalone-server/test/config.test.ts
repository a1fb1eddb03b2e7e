import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, redactUrl } from "../src/config.ts";

const key = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

describe("loadConfig", () => {
  it("defaults to the embedded devnet with the canonical EntryPoints", () => {
    const config = loadConfig({});
    expect(config.rpcUrl).toBeUndefined();
    expect(config.port).toBe(4337);
    expect(config.database).toBe(":memory:");
    expect(config.entryPoints.map((ep) => ep.version)).toEqual(["0.6", "0.7", "0.8"]);
  });

  it("reads a config file and lets the environment override it", () => {
    const file = join(mkdtempSync(join(tmpdir(), "bundlekit-")), "config.json");
    writeFileSync(file, JSON.stringify({ rpcUrl: "http://node:8545", relayerKeys: [key], port: 5000, bundleSize: 3 }));
    const config = loadConfig({ BUNDLEKIT_CONFIG: file, BUNDLEKIT_PORT: "6000" });
    expect(config).toMatchObject({ rpcUrl: "http://node:8545", relayerKeys: [key], port: 6000, bundler: { bundleSize: 3 } });
    expect(loadConfig({}, ["--config", file]).port).toBe(5000);
  });

  it("accepts non-canonical EntryPoints only with a version", () => {
    const address = "0x1111111111111111111111111111111111111111";
    expect(loadConfig({ BUNDLEKIT_ENTRYPOINTS: `${address}@0.7` }).entryPoints).toEqual([{ address, version: "0.7" }]);
    expect(() => loadConfig({ BUNDLEKIT_ENTRYPOINTS: address })).toThrow(/give its version/);
    expect(() => loadConfig({ BUNDLEKIT_ENTRYPOINTS: `${address}@0.5` })).toThrow(/version 0.5 is not supported/);
    expect(() => loadConfig({ BUNDLEKIT_ENTRYPOINTS: "0x1234@0.7" })).toThrow(/not an address/);
  });

  it.each([
    [{ BUNDLEKIT_CONFIG: "/nonexistent/bundlekit.json" }, /cannot read config file/],
    [{ BUNDLEKIT_RPC_URL: "ftp://node", BUNDLEKIT_RELAYER_KEYS: key }, /must be http\(s\) or ws\(s\)/],
    [{ BUNDLEKIT_RPC_URL: "http://node", BUNDLEKIT_RELAYER_KEYS: `${key},0xzz` }, /relayer key #2/],
    [{ BUNDLEKIT_BUNDLE_SIZE: "0" }, /bundleSize must be an integer from 1/],
    [{ BUNDLEKIT_LOG_LEVEL: "loud" }, /logLevel must be one of/],
    [{ BUNDLEKIT_BENEFICIARY: "me" }, /beneficiary: "me" is not an address/],
  ])("rejects %o", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("never echoes a relayer key", () => {
    const bad = `${key.slice(0, 60)}`;
    expect(() => loadConfig({ BUNDLEKIT_RPC_URL: "http://node", BUNDLEKIT_RELAYER_KEYS: bad })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(bad.slice(2, 20)) }),
    );
  });

  it("redacts credentials and paths from URLs it prints", () => {
    expect(redactUrl("https://user:pass@rpc.example.org/v3/KEY?x=1")).toBe("https://rpc.example.org/…");
    expect(redactUrl("http://127.0.0.1:8545")).toBe("http://127.0.0.1:8545");
  });
});
