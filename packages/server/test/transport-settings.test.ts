import { writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

describe("transport settings", () => {
  it("default to localhost and IP literals, no browser origin, and the documented limits", () => {
    expect(loadConfig({}).transport).toEqual({
      allowedHosts: ["localhost"],
      allowedOrigins: [],
      maxConnections: 1000,
      maxConnectionsPerIp: 100,
      maxInFlightRequests: 32,
      maxUnsentBytes: 1048576,
      webSocketIdleTimeoutMs: 300000,
      webSocketPingIntervalMs: 30000,
    });
  });

  it("read lists and limits from the environment, over the file", () => {
    const file = join(mkdtempSync(join(tmpdir(), "bundlekit-")), "config.json");
    writeFileSync(file, JSON.stringify({ allowedOrigins: ["https://app.example.org/"], maxConnections: 50, allowedHosts: ["a.example"] }));
    const config = loadConfig({
      BUNDLEKIT_CONFIG: file,
      BUNDLEKIT_ALLOWED_HOSTS: "Bundler.Example.org, localhost",
      BUNDLEKIT_MAX_CONNECTIONS_PER_IP: "10",
      BUNDLEKIT_MAX_IN_FLIGHT_REQUESTS: "4",
      BUNDLEKIT_MAX_UNSENT_BYTES: "65536",
      BUNDLEKIT_WS_IDLE_TIMEOUT_MS: "0",
      BUNDLEKIT_WS_PING_INTERVAL_MS: "5000",
    });
    expect(config.transport).toEqual({
      allowedHosts: ["bundler.example.org", "localhost"],
      allowedOrigins: ["https://app.example.org"],
      maxConnections: 50,
      maxConnectionsPerIp: 10,
      maxInFlightRequests: 4,
      maxUnsentBytes: 65536,
      webSocketIdleTimeoutMs: 0,
      webSocketPingIntervalMs: 5000,
    });
    expect(loadConfig({ BUNDLEKIT_ALLOWED_ORIGINS: "*", BUNDLEKIT_ALLOWED_HOSTS: "*" }).transport).toMatchObject({
      allowedHosts: ["*"],
      allowedOrigins: ["*"],
    });
  });

  it.each([
    [{ BUNDLEKIT_ALLOWED_HOSTS: "http://bundler.example.org" }, /^allowedHosts: "http:\/\/bundler.example.org" is not a host name; list names such as bundler.example.org \(no scheme or port\), or \* for any$/],
    [{ BUNDLEKIT_ALLOWED_HOSTS: "bundler.example.org:4337" }, /^allowedHosts: "bundler.example.org:4337" is not a host name/],
    [{ BUNDLEKIT_ALLOWED_ORIGINS: "app.example.org" }, /^allowedOrigins: "app.example.org" is not an origin; list scheme:\/\/host\[:port\] such as https:\/\/app.example.org, or \* for any$/],
    [{ BUNDLEKIT_ALLOWED_ORIGINS: "https://app.example.org/page" }, /^allowedOrigins: "https:\/\/app.example.org\/page" is not an origin/],
    [{ BUNDLEKIT_MAX_CONNECTIONS: "0" }, /^maxConnections must be an integer from 1/],
    [{ BUNDLEKIT_MAX_CONNECTIONS_PER_IP: "many" }, /^maxConnectionsPerIp must be an integer from 1/],
    [{ BUNDLEKIT_MAX_IN_FLIGHT_REQUESTS: "0" }, /^maxInFlightRequests must be an integer from 1/],
    [{ BUNDLEKIT_MAX_UNSENT_BYTES: "100" }, /^maxUnsentBytes must be an integer from 1024/],
    [{ BUNDLEKIT_WS_IDLE_TIMEOUT_MS: "-1" }, /^webSocketIdleTimeoutMs must be an integer from 0/],
    [{ BUNDLEKIT_WS_PING_INTERVAL_MS: "1.5" }, /^webSocketPingIntervalMs must be an integer from 0/],
  ])("reject %o with one line naming the setting", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
