import { mkdtempSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@bundlekit/core";
import { describe, expect, it } from "vitest";
import { Cause, ConfigProvider, Effect, Exit } from "effect";
import { ConfigError, loadConfig, redactUrl, serverConfig, settingNames } from "../src/config.ts";
import { describeDatabase } from "../src/database-url.ts";
import { describeFailure } from "../src/start-failure.ts";
import { openStores } from "../src/stores.ts";

const key = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

describe("loadConfig", () => {
  it("defaults to the embedded devnet with the canonical EntryPoints", () => {
    const config = loadConfig({});
    expect(config.rpcUrl).toBeUndefined();
    expect(config.port).toBe(4337);
    expect(config.database).toBe(":memory:");
    expect(config.entryPoints.map((ep) => ep.version)).toEqual(["0.6", "0.7", "0.8", "0.9"]);
  });

  it("reads a config file and lets the environment override it", () => {
    const file = join(mkdtempSync(join(tmpdir(), "bundlekit-")), "config.json");
    writeFileSync(file, JSON.stringify({ rpcUrl: "http://node:8545", relayerKeys: [key], port: 5000, bundleSize: 3 }));
    const config = loadConfig({ BUNDLEKIT_CONFIG: file, BUNDLEKIT_PORT: "6000" });
    expect(config).toMatchObject({ rpcUrl: "http://node:8545", relayerKeys: [key], port: 6000, bundler: { bundling: { maxOperations: 3 } } });
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

  it("limits node calls, simulations and the shutdown by default, each setting checked", () => {
    expect(loadConfig({})).toMatchObject({
      nodeTimeoutMs: 3000,
      nodeRetryCount: 1,
      nodeBatchSize: 8,
      shutdownGraceMs: 8000,
      databasePoolSize: 10,
      metricsPort: undefined,
      metricsHost: "127.0.0.1",
    });
    expect(
      loadConfig({
        BUNDLEKIT_NODE_TIMEOUT_MS: "1500",
        BUNDLEKIT_NODE_RETRY_COUNT: "0",
        BUNDLEKIT_NODE_BATCH_SIZE: "1",
        BUNDLEKIT_SHUTDOWN_GRACE_MS: "25000",
        BUNDLEKIT_DATABASE_POOL_SIZE: "40",
        BUNDLEKIT_METRICS_PORT: "9464",
        BUNDLEKIT_METRICS_HOST: "10.0.0.5",
        BUNDLEKIT_MAX_CONCURRENT_SIMULATIONS: "4",
        BUNDLEKIT_MAX_QUEUED_SIMULATIONS: "0",
      }),
    ).toMatchObject({
      nodeTimeoutMs: 1500,
      nodeRetryCount: 0,
      nodeBatchSize: 1,
      shutdownGraceMs: 25000,
      databasePoolSize: 40,
      metricsPort: 9464,
      metricsHost: "10.0.0.5",
      bundler: { validation: { maxConcurrentSimulations: 4, maxQueuedSimulations: 0 } },
    });
  });

  it.each([
    [{ BUNDLEKIT_NODE_TIMEOUT_MS: "50" }, 'nodeTimeoutMs must be an integer from 100 to 600000, got "50"'],
    [{ BUNDLEKIT_NODE_RETRY_COUNT: "-1" }, 'nodeRetryCount must be an integer from 0 to 10, got "-1"'],
    [{ BUNDLEKIT_NODE_BATCH_SIZE: "0" }, 'nodeBatchSize must be an integer from 1 to 1000, got "0"'],
    [{ BUNDLEKIT_SHUTDOWN_GRACE_MS: "soon" }, 'shutdownGraceMs must be an integer from 0 to 600000, got "soon"'],
    [{ BUNDLEKIT_DATABASE_POOL_SIZE: "0" }, 'databasePoolSize must be an integer from 1 to 1000, got "0"'],
    [{ BUNDLEKIT_METRICS_PORT: "4337" }, "metricsPort must differ from port (4337): unset it to serve /metrics on the public port"],
    [{ BUNDLEKIT_METRICS_PORT: "70000" }, 'metricsPort must be an integer from 0 to 65535, got "70000"'],
    [{ BUNDLEKIT_MAX_CONCURRENT_SIMULATIONS: "0" }, 'maxConcurrentSimulations must be an integer from 1 to 10000, got "0"'],
    [{ BUNDLEKIT_MAX_QUEUED_SIMULATIONS: "-1" }, 'maxQueuedSimulations must be an integer from 0 to 100000, got "-1"'],
  ])("rejects the limit %o, naming it", (env, message) => {
    expect(() => loadConfig(env)).toThrow(new ConfigError(message));
  });

  it("never echoes a relayer key", () => {
    const bad = `${key.slice(0, 60)}`;
    expect(() => loadConfig({ BUNDLEKIT_RPC_URL: "http://node", BUNDLEKIT_RELAYER_KEYS: bad })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(bad.slice(2, 20)) }),
    );
  });

  it("takes a PostgreSQL URL as the database, and names each service by host and port unless told", () => {
    const url = "postgres://bundler:s3cret@db.internal:5432/bundlekit?options=-c%20search_path%3Dpool";
    expect(loadConfig({ BUNDLEKIT_DATABASE: url, BUNDLEKIT_PORT: "4400" })).toMatchObject({ database: url, instanceId: `${hostname()}:4400` });
    expect(loadConfig({ BUNDLEKIT_DATABASE: "postgresql://db.internal/bundlekit", BUNDLEKIT_INSTANCE_ID: "east-1" }).instanceId).toBe("east-1");
    expect(loadConfig({ BUNDLEKIT_DATABASE: "postgres:///bundlekit?host=/var/run/postgresql" }).database).toContain("host=");
  });

  it.each(["postgres://bundler:s3cret@db.internal:port/bundlekit", "postgres://bundler:s3cret@/bundlekit", "postgres://bundler:s3cret@db:99999/x"])(
    "rejects the malformed PostgreSQL URL %s without echoing it",
    (url) => {
      const error = (() => {
        try {
          loadConfig({ BUNDLEKIT_DATABASE: url });
        } catch (thrown) {
          return thrown as Error;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.message).toBe("database (BUNDLEKIT_DATABASE) is not a valid PostgreSQL URL; expected postgres://user:password@host:5432/database");
    },
  );

  it("prints a database without its password or query", () => {
    expect(describeDatabase("postgres://bundler:s3cret@db.internal:5432/bundlekit?sslmode=require")).toBe("postgres://bundler:***@db.internal:5432/bundlekit?…");
    expect(describeDatabase("postgresql://db.internal/bundlekit")).toBe("postgresql://db.internal/bundlekit");
    expect(describeDatabase("/var/lib/bundlekit/mempool.sqlite")).toBe("/var/lib/bundlekit/mempool.sqlite");
  });

  it("redacts credentials and paths from URLs it prints", () => {
    expect(redactUrl("https://user:pass@rpc.example.org/v3/KEY?x=1")).toBe("https://rpc.example.org/…");
    expect(redactUrl("http://127.0.0.1:8545")).toBe("http://127.0.0.1:8545");
  });
});

describe("loadConfig: engine settings", () => {
  const paymaster = "0x1111111111111111111111111111111111111111";
  const factory = "0x2222222222222222222222222222222222222222";
  const writeConfig = (json: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), "bundlekit-")), "config.json");
    writeFileSync(file, JSON.stringify(json));
    return file;
  };

  it("reads every bundler_config setting from the file, in its documented units", () => {
    const file = writeConfig({
      bundlingMode: "manual",
      beneficiary: paymaster,
      testingMode: true,
      redirectRpc: true,
      minInclusionDenominator: 20,
      throttlingSlack: 5,
      banSlack: 40,
      minStake: "0.01 eth",
      minUnstakeDelay: 3600,
      minSignerBalance: "250 gwei",
      multicall: factory,
      estimationStaticBuffer: 21000,
      validationGasLimit: 5000000,
      receiptLookupRange: 2048,
      explorerApiKey: "EXPLORER-KEY",
      conditionalTransactions: true,
      rpcEndpointSubmit: "https://submit.example.org/",
      gasPriceMarkup: 15,
      enforceGasPrice: true,
      enforceGasPriceThreshold: 25,
      eip2930: true,
      useropsTTL: 900,
      whitelistedEntities: { paymaster: [paymaster], factory: [factory] },
      bundleGasLimitMarkup: 30,
      relayingMode: "conditional",
      bundleInterval: 500,
      bundleSize: 4,
      pvgMarkup: 8,
      skipBundleValidation: true,
    });
    const config = loadConfig({ BUNDLEKIT_CONFIG: file });
    expect(config).toMatchObject({ testingMode: true, redirectRpc: true, explorerApiKey: "EXPLORER-KEY" });
    expect(config.bundler).toEqual({
      mempool: { ttlSeconds: 900 },
      reputation: {
        minInclusionDenominator: 20,
        throttlingSlack: 5,
        banSlack: 40,
        minStake: 10_000_000_000_000_000n,
        minUnstakeDelaySeconds: 3600,
        whitelistedEntities: { paymaster: [paymaster], account: [], factory: [factory] },
      },
      gas: {
        estimationStaticBuffer: 21_000n,
        validationGasLimit: 5_000_000n,
        gasPriceMarkupPercent: 15,
        enforceGasPrice: true,
        enforceGasPriceThresholdPercent: 25,
        preVerificationGasMarkupPercent: 8,
      },
      bundling: {
        mode: "manual",
        beneficiary: paymaster,
        accessList: true,
        gasLimitMarkupPercent: 30,
        intervalMs: 500,
        maxOperations: 4,
        skipValidation: true,
      },
      relaying: { minSignerBalance: 250_000_000_000n, multicall: factory, submitUrl: "https://submit.example.org/", mode: "conditional" },
      tracking: { receiptLookupBlocks: 2048 },
    });
  });

  it("takes BUNDLEKIT_<UPPER_SNAKE> variables over the file", () => {
    const file = writeConfig({ useropsTTL: 900, eip2930: false, whitelistedEntities: { paymaster: [paymaster] } });
    const { bundler } = loadConfig({
      BUNDLEKIT_CONFIG: file,
      BUNDLEKIT_USEROPS_TTL: "60",
      BUNDLEKIT_EIP2930: "true",
      BUNDLEKIT_MIN_SIGNER_BALANCE: "1000",
      BUNDLEKIT_RPC_ENDPOINT_SUBMIT: "wss://submit.example.org/ws",
      BUNDLEKIT_RELAYING_MODE: "classic",
      BUNDLEKIT_BUNDLE_CLAIM_LEASE_MS: "15000",
      BUNDLEKIT_WHITELISTED_PAYMASTER: "",
      BUNDLEKIT_WHITELISTED_ACCOUNT: `${factory}, ${paymaster}`,
      BUNDLEKIT_ESTIMATION_GAS_MARKUP_PERCENT: "5",
      BUNDLEKIT_EXECUTION_GAS_LIMIT: "2000000",
      BUNDLEKIT_VALIDATION_MODE: "unsafe",
      BUNDLEKIT_TRACER_WORKERS: "0",
      BUNDLEKIT_P256_PRECOMPILE: "true",
      BUNDLEKIT_MAX_USER_OPERATION_SIZE: "16384",
      BUNDLEKIT_MAX_PAYMASTER_CONTEXT_SIZE: "4096",
      BUNDLEKIT_MAX_BUNDLE_CALLDATA_SIZE: "524288",
      BUNDLEKIT_MAX_BUNDLE_CONTEXT_SIZE: "131072",
    });
    expect(bundler).toMatchObject({
      validation: { maxUserOperationBytes: 16_384, maxPaymasterContextBytes: 4096, mode: "unsafe", tracerWorkers: 0, p256Precompile: true },
      bundling: { maxCalldataBytes: 524_288, maxContextBytes: 131_072, accessList: true, claimLeaseMs: 15_000 },
      mempool: { ttlSeconds: 60 },
      relaying: { minSignerBalance: 1000n, submitUrl: "wss://submit.example.org/ws", mode: "classic" },
      reputation: { whitelistedEntities: { paymaster: [], account: [factory, paymaster], factory: [] } },
      gas: { estimationMarkupPercent: 5, executionGasLimit: 2_000_000n },
    });
  });

  it("charges no L1 data fee unless told the chain's model", () => {
    expect(loadConfig({}).l1DataCost).toBe("none");
    expect(loadConfig({ BUNDLEKIT_L1_DATA_COST: "op-stack" }).l1DataCost).toBe("op-stack");
    expect(loadConfig({ BUNDLEKIT_L1_DATA_COST: "arbitrum" }).l1DataCost).toBe("arbitrum");
  });

  it("serves a paymaster endpoint only with both its paymasters and its key, and never echoes the key", () => {
    const paymaster = "0x1111111111111111111111111111111111111111";
    expect(loadConfig({}).paymasterEndpoint).toBeUndefined();
    expect(loadConfig({ BUNDLEKIT_PAYMASTERS: `${paymaster}@0.7`, BUNDLEKIT_PAYMASTER_SIGNER_KEY: key }).paymasterEndpoint).toEqual({ paymasters: { "0.7": paymaster }, signerKey: key });
    expect(() => loadConfig({ BUNDLEKIT_PAYMASTERS: `${paymaster}@0.7` })).toThrow(/^the paymaster endpoint needs both BUNDLEKIT_PAYMASTERS/);
    expect(() => loadConfig({ BUNDLEKIT_PAYMASTERS: paymaster, BUNDLEKIT_PAYMASTER_SIGNER_KEY: key })).toThrow(/give each paymaster's EntryPoint version/);
    for (const bad of [key.slice(0, -2), `${key}00`]) {
      try {
        loadConfig({ BUNDLEKIT_PAYMASTERS: `${paymaster}@0.8`, BUNDLEKIT_PAYMASTER_SIGNER_KEY: bad });
        expect.unreachable();
      } catch (error) {
        expect((error as Error).message).toBe("paymasterSignerKey (BUNDLEKIT_PAYMASTER_SIGNER_KEY) is not a 0x-prefixed 32-byte hex private key");
      }
    }
  });

  it("reads the per-sender pool limit for unstaked senders, and whether a sender may have several operations in a bundle", () => {
    expect(loadConfig({ BUNDLEKIT_SAME_SENDER_MEMPOOL_COUNT: "2" }).bundler).toEqual({ mempool: { sameSenderCount: 2 } });
    expect(loadConfig({ BUNDLEKIT_UNIQUE_SENDERS_PER_BUNDLE: "false" }).bundler).toEqual({ bundling: { uniqueSenders: false } });
    expect(() => loadConfig({ BUNDLEKIT_SAME_SENDER_MEMPOOL_COUNT: "0" })).toThrow('sameSenderMempoolCount must be an integer from 1 to 10000, got "0"');
  });

  it("leaves unset settings to the engine's defaults", () => {
    expect(loadConfig({}).bundler).toEqual({});
  });

  it.each([
    [{ BUNDLEKIT_RELAYING_MODE: "flashbots" }, /^relayingMode must be one of classic, conditional, got "flashbots"$/],
    [{ BUNDLEKIT_ENFORCE_GAS_PRICE: "yes" }, /^enforceGasPrice must be true or false, got "yes"$/],
    [{ BUNDLEKIT_ENFORCE_GAS_PRICE_THRESHOLD: "150" }, /^enforceGasPriceThreshold must be an integer from 0 to 100, got "150"$/],
    [{ BUNDLEKIT_MIN_STAKE: "lots" }, /^minStake must be an amount such as "0.1 eth"/],
    [{ BUNDLEKIT_MIN_SIGNER_BALANCE: "0.5" }, /^minSignerBalance must be an amount/],
    [{ BUNDLEKIT_MULTICALL: "0x12" }, /^multicall: "0x12" is not an address$/],
    [{ BUNDLEKIT_VALIDATION_GAS_LIMIT: "1.5" }, /^validationGasLimit must be an integer/],
    [{ BUNDLEKIT_USEROPS_TTL: "-5" }, /^useropsTTL must be an integer from 0/],
    [{ BUNDLEKIT_WHITELISTED_FACTORY: "0xnope" }, /^whitelistedEntities.factory: "0xnope" is not an address$/],
    [{ BUNDLEKIT_PVG_MARKUP: "-1" }, /^pvgMarkup must be an integer from 0 to 1000/],
    [{ BUNDLEKIT_ESTIMATION_GAS_MARKUP_PERCENT: "ten" }, /^estimationGasMarkupPercent must be an integer from 0 to 1000/],
    [{ BUNDLEKIT_VALIDATION_MODE: "fast" }, /^validationMode must be one of safe, unsafe, got "fast"$/],
    [{ BUNDLEKIT_VALIDATION_TRACER: "native" }, /^validationTracer must be one of in-process, js, got "native"$/],
    [{ BUNDLEKIT_L1_DATA_COST: "optimism" }, /^l1DataCost must be one of none, op-stack, arbitrum, got "optimism"$/],
  ])("rejects %o with one line naming the setting", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("never echoes the explorer key or the submit endpoint's credentials", () => {
    const file = writeConfig({ explorerApiKey: 123456789 });
    expect(() => loadConfig({ BUNDLEKIT_CONFIG: file })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining("123456789") }),
    );
    for (const url of ["ftp://operator:pa55word@submit.example.org/v3/KEY-9", "not a url pa55word KEY-9"]) {
      let message = "";
      try {
        loadConfig({ BUNDLEKIT_RPC_ENDPOINT_SUBMIT: url });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        message = (error as Error).message;
      }
      expect(message).toMatch(/^rpcEndpointSubmit /);
      expect(message).not.toContain("pa55word");
      expect(message).not.toContain("KEY-9");
    }
  });

  describe("through Effect's Config", () => {
    const read = (env: Record<string, string>, argv: string[] = []) =>
      Effect.runPromise(Effect.result(serverConfig(argv).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))));

    it("reads every setting from the program's ConfigProvider, with the same result as from the environment", async () => {
      const env = { BUNDLEKIT_RPC_URL: "http://node:8545", BUNDLEKIT_RELAYER_KEYS: key, BUNDLEKIT_PORT: "5000", BUNDLEKIT_BUNDLE_INTERVAL: "250", BUNDLEKIT_L1_DATA_COST: "op-stack", BUNDLEKIT_WHITELISTED_FACTORY: "0x1111111111111111111111111111111111111111" };
      const result = await read(env);
      expect(result._tag).toBe("Success");
      expect((result as { success: unknown }).success).toEqual(loadConfig(env));
      expect(settingNames).toEqual(expect.arrayContaining(["BUNDLEKIT_CONFIG", "BUNDLEKIT_RPC_URL", "BUNDLEKIT_BUNDLE_INTERVAL", "BUNDLEKIT_L1_DATA_COST", "BUNDLEKIT_WHITELISTED_FACTORY", "BUNDLEKIT_VALIDATION_MODE"]));
    });

    it("fails with the same one-line message, the ConfigError kept as the cause", async () => {
      const result = await read({ BUNDLEKIT_PORT: "http" });
      expect(result._tag).toBe("Failure");
      const failure = (result as { failure: { cause: { cause: unknown } } }).failure;
      expect(failure.cause.cause).toBeInstanceOf(ConfigError);
      expect((failure.cause.cause as ConfigError).message).toBe((() => {
        try {
          loadConfig({ BUNDLEKIT_PORT: "http" });
        } catch (error) {
          return (error as Error).message;
        }
      })());
    });
  });
});

/** What `pnpm start` prints after "bundlekit: " before it exits 1 (cli.test.ts starts the process itself). */
describe("a bad configuration, in the one line pnpm start prints", () => {
  const startFailure = async (env: Record<string, string>) => {
    const exit = await Effect.runPromiseExit(serverConfig([]).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))));
    return Exit.isFailure(exit) ? describeFailure(exit.cause) : "started";
  };

  it.each([
    ["an RPC URL that is no URL", { BUNDLEKIT_RPC_URL: "not-a-url", BUNDLEKIT_RELAYER_KEYS: key }, 'BUNDLEKIT_RPC_URL "not-a-url" is not a valid URL'],
    ["a relayer key that is no key", { BUNDLEKIT_RPC_URL: "http://127.0.0.1:9", BUNDLEKIT_RELAYER_KEYS: "0x1234" }, "relayer key #1 of 1 in BUNDLEKIT_RELAYER_KEYS (relayerKeys) is not a 0x-prefixed 32-byte hex private key"],
    ["an RPC URL without relayer keys", { BUNDLEKIT_RPC_URL: "http://127.0.0.1:9" }, "BUNDLEKIT_RELAYER_KEYS (or relayerKeys) is required with an RPC URL, unless BUNDLEKIT_BUNDLING_MODE is pull (the block builder signs)"],
    ["a port that is no number", { BUNDLEKIT_PORT: "http" }, 'port must be an integer from 0 to 65535, got "http"'],
    [
      "a PostgreSQL URL with no port number",
      { BUNDLEKIT_DATABASE: "postgres://bundler:s3cret@localhost:port/x" },
      "database (BUNDLEKIT_DATABASE) is not a valid PostgreSQL URL; expected postgres://user:password@host:5432/database",
    ],
  ])("%s: the setting's message", async (_what, env, message) => {
    expect(await startFailure(env)).toBe(message);
  });

  it("a database that cannot be opened: named without its password, with the reason", async () => {
    // Port 1 on this machine: nothing listens there, so the connection is refused at once.
    const error = await openStores("postgres://bundler:s3cret@127.0.0.1:1/bundlekit", silentLogger).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(describeFailure(Cause.fail(error))).toBe("cannot open the database postgres://bundler:***@127.0.0.1:1/bundlekit: connect ECONNREFUSED 127.0.0.1:1");
  });

  it("anything else: failed to start, with the first line of what failed", () => {
    expect(describeFailure(Cause.die(new Error("listen EADDRINUSE: address already in use\n    at Server.listen")))).toBe("failed to start: listen EADDRINUSE: address already in use");
  });
});
