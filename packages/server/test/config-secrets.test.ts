import { Cause, ConfigProvider, Effect, Exit } from "effect";
import { createPublicClient, type Hex, http, type PublicClient } from "viem";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, secretSettingNames, serverConfig, settingNames } from "../src/config.ts";
import { createPaymasterMethods } from "../src/paymaster-endpoint.ts";
import { describeFailure } from "../src/start-failure.ts";

const key = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const hex = (value: bigint): Hex => `0x${value.toString(16).padStart(64, "0")}`;
/** Private keys out of secp256k1's range: zero, the curve order n, and 2^256 − 1. */
const outOfRange = [hex(0n), hex(n), hex(2n ** 256n - 1n)];

/** What `pnpm start` prints after "bundlekit: " for this environment (in-process, as start-failure.ts describes it). */
async function startFailure(env: Record<string, string>): Promise<string> {
  const exit = await Effect.runPromiseExit(
    serverConfig([]).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
    ),
  );
  return Exit.isFailure(exit) ? describeFailure(exit.cause) : "started";
}

/** The error `run` throws. */
function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("nothing was thrown");
}

describe("secrets in configuration errors", () => {
  it.each(outOfRange)(
    "a relayer key out of range (%s) is named by setting and position, never by value",
    async (bad) => {
      const env = {
        BUNDLEKIT_RPC_URL: "http://127.0.0.1:9",
        BUNDLEKIT_RELAYER_KEYS: `${key},${bad}`,
      };
      const line = await startFailure(env);
      expect(line).toBe(
        "relayer key #2 of 2 in BUNDLEKIT_RELAYER_KEYS (relayerKeys) is out of range: a secp256k1 private key is from 1 to the curve order n − 1",
      );
      expect(thrown(() => loadConfig(env))).toBeInstanceOf(ConfigError);
    },
  );

  it.each(outOfRange)(
    "a paymaster signer key out of range (%s) stops start-up, named by setting, never by value",
    async (bad) => {
      const line = await startFailure({
        BUNDLEKIT_PAYMASTERS: "0x1111111111111111111111111111111111111111@0.7",
        BUNDLEKIT_PAYMASTER_SIGNER_KEY: bad,
      });
      expect(line).toBe(
        "paymasterSignerKey (BUNDLEKIT_PAYMASTER_SIGNER_KEY) is out of range: a secp256k1 private key is from 1 to the curve order n − 1",
      );
    },
  );

  it("an embedder's paymaster endpoint with a bad signer key fails when created, not on each request", () => {
    const client = createPublicClient({ transport: http("http://127.0.0.1:9") }) as PublicClient;
    const error = thrown(() =>
      createPaymasterMethods(client, {
        signerKey: hex(n),
        paymasters: {},
        policy: async () => ({ sponsor: true }),
      }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      "the paymaster signer key is out of range: a secp256k1 private key is from 1 to the curve order n − 1",
    );
  });

  it.each([
    [
      "postgress://bundler:s3cret@db.internal/bundlekit",
      'database (BUNDLEKIT_DATABASE) looks like a URL with the scheme "postgress:", which is not supported',
    ],
    [
      "mysql://bundler:s3cret@db.internal/bundlekit",
      'database (BUNDLEKIT_DATABASE) looks like a URL with the scheme "mysql:", which is not supported',
    ],
    [
      "redis://:s3cret@cache:6379",
      'database (BUNDLEKIT_DATABASE) looks like a URL with the scheme "redis:", which is not supported',
    ],
    [
      "postgres:bundler:s3cret@db.internal",
      "database (BUNDLEKIT_DATABASE) is not a valid PostgreSQL URL; expected postgres://user:password@host:5432/database",
    ],
    [
      "postgresql//bundler:s3cret@db.internal/x",
      "database (BUNDLEKIT_DATABASE) is not a valid PostgreSQL URL; expected postgres://user:password@host:5432/database",
    ],
  ])(
    "a mistyped database URL (%s) is refused, not opened as a SQLite file, without its password",
    async (database, start) => {
      const line = await startFailure({ BUNDLEKIT_DATABASE: database });
      expect(line.startsWith(start)).toBe(true);
      expect(line).not.toContain("s3cret");
    },
  );

  it("a SQLite file is a plain path or :memory:, also one whose name starts like postgres", () => {
    for (const database of [
      ":memory:",
      "bundlekit-mempool.sqlite",
      "./data/mempool.sqlite",
      "/var/lib/bundlekit/a.sqlite",
      "postgres.sqlite",
      "postgres/mempool.sqlite",
      "./a:b.sqlite",
    ]) {
      expect(loadConfig({ BUNDLEKIT_DATABASE: database }).database).toBe(database);
    }
  });

  it("a start that fails on anything else prints the first line of what failed, its URLs cut", () => {
    const failure = new Error(
      "HTTP request failed. URL: https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef\nRequest body: {}",
    );
    expect(describeFailure(Cause.die(failure))).toBe(
      "failed to start: HTTP request failed. URL: https://mainnet.infura.io/…",
    );
  });
});

describe("serverConfig reads secrets Redacted", () => {
  it("names only settings the service reads, so a renamed one cannot fall back to plain text", () => {
    expect(secretSettingNames.filter((name) => !settingNames.includes(name))).toEqual([]);
  });

  it("still hands the service the secret's value", async () => {
    const config = await Effect.runPromise(
      serverConfig([]).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { BUNDLEKIT_RPC_URL: "http://127.0.0.1:8545/key", BUNDLEKIT_RELAYER_KEYS: key } })),
      ),
    );
    expect([config.rpcUrl, config.relayerKeys]).toEqual(["http://127.0.0.1:8545/key", [key]]);
  });
});
