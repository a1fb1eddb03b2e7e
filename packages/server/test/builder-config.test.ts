import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { serviceRedactor } from "../src/service-redactor.ts";

const secretHex = "7365637265742d6275696c6465722d6a77742d7365637265742d333262797465";
const directory = mkdtempSync(join(tmpdir(), "bundlekit-builder-config-"));
const file = (name: string, content: string) => {
  const path = join(directory, name);
  writeFileSync(path, content);
  return path;
};

describe("builder API settings", () => {
  it("are off by default", () => {
    expect(loadConfig({}).builder).toBeUndefined();
  });

  it("read the port, the host (default 127.0.0.1) and the 32-byte hex secret from its file, with or without 0x", () => {
    const secretFile = file("jwt.hex", `  0x${secretHex}\n`);
    expect(
      loadConfig({ BUNDLEKIT_BUILDER_PORT: "8551", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: secretFile })
        .builder,
    ).toEqual({
      port: 8551,
      host: "127.0.0.1",
      jwtSecret: `0x${secretHex}`,
    });
    const bare = file("jwt-bare.hex", secretHex.toUpperCase());
    expect(
      loadConfig({
        BUNDLEKIT_BUILDER_PORT: "8551",
        BUNDLEKIT_BUILDER_HOST: "10.0.0.7",
        BUNDLEKIT_BUILDER_JWT_SECRET_FILE: bare,
      }).builder,
    ).toEqual({
      port: 8551,
      host: "10.0.0.7",
      jwtSecret: `0x${secretHex}`,
    });
  });

  it.each([
    [
      { BUNDLEKIT_BUILDER_PORT: "8551" },
      "the builder API needs BUNDLEKIT_BUILDER_JWT_SECRET_FILE (builderJwtSecretFile): a file holding a 32-byte hex secret",
    ],
    [
      { BUNDLEKIT_BUILDER_JWT_SECRET_FILE: "/tmp/x" },
      "builderJwtSecretFile is set but builderPort is not: set BUNDLEKIT_BUILDER_PORT to serve the builder API",
    ],
    [
      { BUNDLEKIT_BUILDER_PORT: "4337", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: "/tmp/x" },
      "builderPort must differ from port (4337)",
    ],
    [
      { BUNDLEKIT_BUILDER_PORT: "port", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: "/tmp/x" },
      'builderPort must be an integer from 0 to 65535, got "port"',
    ],
    [
      { BUNDLEKIT_BUILDER_PORT: "8551", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: "/nonexistent/jwt.hex" },
      "cannot read the builder JWT secret file /nonexistent/jwt.hex: ENOENT",
    ],
  ])("refuse %o, saying what is wrong", (env, message) => {
    expect(() => loadConfig(env)).toThrow(new ConfigError(message));
  });

  it("refuse a secret that is not 32 bytes of hex, without quoting it", () => {
    const short = file("short.hex", secretHex.slice(0, 62));
    const error = (() => {
      try {
        loadConfig({ BUNDLEKIT_BUILDER_PORT: "8551", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: short });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toEqual(
      new ConfigError(`the builder JWT secret file ${short} must hold 32 bytes as 64 hex digits`),
    );
  });

  it("need no relayer key in pull mode, where the block builder signs; any other mode with an RPC URL does", () => {
    expect(
      loadConfig({ BUNDLEKIT_RPC_URL: "http://127.0.0.1:8545", BUNDLEKIT_BUNDLING_MODE: "pull" }),
    ).toMatchObject({
      relayerKeys: [],
      bundler: { bundling: { mode: "pull" } },
    });
    for (const mode of ["auto", "manual"]) {
      expect(() =>
        loadConfig({ BUNDLEKIT_RPC_URL: "http://127.0.0.1:8545", BUNDLEKIT_BUNDLING_MODE: mode }),
      ).toThrow(
        new ConfigError(
          "BUNDLEKIT_RELAYER_KEYS (or relayerKeys) is required with an RPC URL, unless BUNDLEKIT_BUNDLING_MODE is pull (the block builder signs)",
        ),
      );
    }
  });

  it("keep the secret out of every log line and error of the service", () => {
    const secretFile = file("jwt-redact.hex", secretHex);
    const redactor = serviceRedactor(
      loadConfig({ BUNDLEKIT_BUILDER_PORT: "8551", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: secretFile }),
    );
    expect(redactor.text(`secret 0x${secretHex} and ${secretHex.toUpperCase()}`)).toBe(
      "secret 0x[redacted] and [redacted]",
    );
  });
});
