import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import {
  BundlerConfigError,
  type BundlerSettingsInput,
  bundlerSettingRules,
  engineSettingNames,
  canonicalEntryPoints,
  type EntryPointVersion,
  entryPointVersions,
  type L1DataCostName,
  l1DataCosts,
  type MempoolPolicyName,
  mempoolPolicyNames,
  redactUrl as redactUrlParts,
  resolveBundlerSettings,
} from "@bundlekit/core";
import { privateKeyProblem } from "@bundlekit/signer-relayer";
import { Config, ConfigProvider, Effect, Option, Redacted } from "effect";
import type { Address, Hex } from "viem";
import { readBuilderJwtSecret } from "./builder-api/builder-jwt.ts";
import { parseCommandLine } from "./command-line.ts";
import { address, amount, ConfigError, integer } from "./config-values.ts";
import { isPostgresDatabase, parsePostgresUrl } from "./database-url.ts";
import type { SponsorshipSettings } from "./sponsorship/configured-policy.ts";
import { readPreconfirmationKey } from "./preconfirmation-key.ts";
import { parseSponsorshipSettings } from "./sponsorship/settings-file.ts";
import { type TransportSettings, transportSettings } from "./transport-settings.ts";

export { ConfigError } from "./config-values.ts";

/** Everything the stand-alone service needs; see docs/configuration.md. */
export interface ServerConfig {
  /** The node to serve; undefined starts the embedded devnet. */
  rpcUrl: string | undefined;
  relayerKeys: Hex[];
  entryPoints: { address: Address; version: EntryPointVersion }[];
  host: string;
  port: number;
  /**
   * Where the mempool and reputation live: a SQLite file (`:memory:` keeps nothing across
   * restarts), or a PostgreSQL URL (`postgres://…`) that several services may share.
   */
  database: string;
  /**
   * Most connections the service keeps open to a PostgreSQL `database` (its pool's size; default
   * 10, node-postgres's). Every service sharing the database counts against the server's
   * `max_connections`. Unused with SQLite, which is one connection.
   */
  databasePoolSize: number;
  /**
   * Names this service in the mempool's claims. Stable across restarts, so a restarted service
   * reconciles the operations it had in flight at once; one per service sharing a database.
   * Default `<hostname>:<port>`.
   */
  instanceId: string;
  /** Which shipped mempool policy orders and packs bundles (`mempoolPolicies`). */
  mempoolPolicy: MempoolPolicyName;
  /** The chain's L1 data-fee model, which preVerificationGas must cover on an L2 (`l1DataCosts`); `none` on L1. */
  l1DataCost: L1DataCostName | "none";
  maxBodyBytes: number;
  maxBatchSize: number;
  /** Most `eth_subscribe` subscriptions one WebSocket connection may hold. */
  maxSubscriptions: number;
  /** Serve Prometheus metrics at `GET /metrics`. */
  metrics: boolean;
  /** Browser safety (allowed hosts and origins) and connection limits of the JSON-RPC transport. */
  transport: TransportSettings;
  /**
   * Serve `/metrics` on a listener of its own at `metricsHost:metricsPort`, and not on the
   * public port. Default undefined: on the public port.
   */
  metricsPort: number | undefined;
  /** Interface of the metrics listener. Default `127.0.0.1`. */
  metricsHost: string;
  /** Milliseconds one request to the node may take before it fails (and is retried). Default 3000. */
  nodeTimeoutMs: number;
  /** Further attempts after a node request fails or times out. Default 1. */
  nodeRetryCount: number;
  /** Most node requests joined into one HTTP JSON-RPC batch (1: none). Default 8. */
  nodeBatchSize: number;
  /**
   * Milliseconds from SIGTERM (or SIGINT) to exit: requests in flight get until a second before
   * it ends (half of it when it is under 2 s), then answer an error. Default 8000.
   */
  shutdownGraceMs: number;
  /**
   * Serve the `debug_bundler_*` methods (they clear the mempool and rewrite reputation at will):
   * for test networks only. `testingMode` turns them on too. Default false.
   */
  debugMethods: boolean;
  logLevel: "debug" | "info" | "warn" | "error";
  /**
   * Serve an ERC-7677 paymaster endpoint (`pm_getPaymasterStubData`, `pm_getPaymasterData`)
   * signing for these verifying paymasters with this key. Off unless both are set, and then only
   * with a `sponsorshipPolicy`; the embedded devnet turns it on with its own paymasters.
   */
  paymasterEndpoint: PaymasterEndpointSettings | undefined;
  /**
   * Who the paymaster endpoint sponsors, and up to how much: API keys with their allowlists, caps
   * and quotas (docs/security.md). Required with `paymasterEndpoint` off the embedded devnet; on
   * the devnet it replaces the open devnet policy.
   */
  sponsorshipPolicy: SponsorshipSettings | undefined;
  /**
   * Open the `debug_bundler_*` methods to every caller, as `debugMethods` does, and say so in
   * `bundler_config`'s flags; for test networks only. Default false.
   */
  testingMode: boolean;
  /**
   * Forward the standard node methods (`eth_call`, `eth_getBalance`, …) to the node; otherwise
   * they answer -32601. Default false.
   */
  redirectRpc: boolean;
  /** A block-explorer API key. A secret: `bundler_config` shows only whether one is set. Default unset. */
  explorerApiKey: string | undefined;
  /**
   * The builder API (docs/sequencer.md): a JSON-RPC listener of its own at `host:port`, each
   * request authenticated by a JWT under the secret (a secret: never logged, never in
   * `bundler_config`). Off (undefined) unless `builderPort` is set; it then needs
   * `builderJwtSecretFile`.
   */
  builder: BuilderApiSettings | undefined;
  /**
   * The key that signs preconfirmations (EIP-712, docs/sequencer.md), read from
   * `preconfirmationKeyFile`. A secret: never logged; `bundler_config` shows only its address.
   * Default unset: preconfirmations are unsigned.
   */
  preconfirmationKey: Hex | undefined;
  /** The engine's settings, checked (`resolveBundlerSettings`), from the flat keys below. */
  bundler: BundlerSettingsInput;
}

/** Where the builder API listens, and the shared secret its callers sign their JWTs with. */
export interface BuilderApiSettings {
  /** 0 picks a free port. */
  port: number;
  /** Default `127.0.0.1`. */
  host: string;
  /** 32 bytes, hex, from `builderJwtSecretFile`. */
  jwtSecret: Hex;
}

/** The paymaster endpoint's settings: which verifying paymaster per EntryPoint version, and the key they trust (a secret). */
export interface PaymasterEndpointSettings {
  paymasters: Partial<Record<EntryPointVersion, Address>>;
  signerKey: Hex;
}

type Source = Record<string, unknown>;

/**
 * Read the configuration: a JSON file named by `BUNDLEKIT_CONFIG` (or `--config`), overridden by
 * `BUNDLEKIT_*` environment variables. Throws `ConfigError` naming the setting at fault.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = []): ServerConfig {
  const commandLine = parseCommandLine(argv);
  const file = (commandLine.help ? undefined : commandLine.configFile) ?? env.BUNDLEKIT_CONFIG;
  let json: Source = {};
  if (file) {
    try {
      json = JSON.parse(readFileSync(file, "utf8")) as Source;
    } catch (error) {
      throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  return readConfig(env, json);
}

/** The settings from the environment, else from the file's `json`, else their defaults. */
function readConfig(env: NodeJS.ProcessEnv, json: Source): ServerConfig {
  const pick = (envName: string, key: string): unknown => env[envName] ?? json[key];

  const rpcUrl = pick("BUNDLEKIT_RPC_URL", "rpcUrl");
  if (rpcUrl !== undefined) parseUrl(rpcUrl, "BUNDLEKIT_RPC_URL");

  const keysRaw = pick("BUNDLEKIT_RELAYER_KEYS", "relayerKeys");
  const relayerKeys = (typeof keysRaw === "string" ? keysRaw.split(",") : ((keysRaw as unknown[]) ?? []))
    .map((k) => String(k).trim())
    .filter((k) => k.length > 0);
  relayerKeys.forEach((key, index) => {
    const problem = privateKeyProblem(key);
    if (problem) throw new ConfigError(`relayer key #${index + 1} of ${relayerKeys.length} in BUNDLEKIT_RELAYER_KEYS (relayerKeys) ${problem}`);
  });

  const port = integer(pick("BUNDLEKIT_PORT", "port") ?? 4337, "port", 0, 65535);
  const config: ServerConfig = {
    rpcUrl: rpcUrl as string | undefined,
    relayerKeys: relayerKeys as Hex[],
    entryPoints: parseEntryPoints(pick("BUNDLEKIT_ENTRYPOINTS", "entryPoints")),
    host: String(pick("BUNDLEKIT_HOST", "host") ?? "127.0.0.1"),
    port,
    database: database(pick("BUNDLEKIT_DATABASE", "database") ?? (rpcUrl ? "bundlekit-mempool.sqlite" : ":memory:")),
    databasePoolSize: integer(pick("BUNDLEKIT_DATABASE_POOL_SIZE", "databasePoolSize") ?? 10, "databasePoolSize", 1, 1000),
    instanceId: nonEmpty(pick("BUNDLEKIT_INSTANCE_ID", "instanceId") ?? `${hostname()}:${port}`, "instanceId"),
    mempoolPolicy: oneOf(pick("BUNDLEKIT_MEMPOOL_POLICY", "mempoolPolicy") ?? "default", "mempoolPolicy", mempoolPolicyNames),
    l1DataCost: oneOf(pick("BUNDLEKIT_L1_DATA_COST", "l1DataCost") ?? "none", "l1DataCost", ["none", ...(Object.keys(l1DataCosts) as L1DataCostName[])]),
    maxBodyBytes: integer(pick("BUNDLEKIT_MAX_BODY_BYTES", "maxBodyBytes") ?? 1024 * 1024, "maxBodyBytes", 1024),
    maxBatchSize: integer(pick("BUNDLEKIT_MAX_BATCH_SIZE", "maxBatchSize") ?? 100, "maxBatchSize", 1),
    maxSubscriptions: integer(pick("BUNDLEKIT_MAX_SUBSCRIPTIONS", "maxSubscriptions") ?? 100, "maxSubscriptions", 0),
    metrics: boolean(pick("BUNDLEKIT_METRICS", "metrics") ?? true, "metrics"),
    transport: transportSettings(pick),
    metricsPort: optionalPort(pick("BUNDLEKIT_METRICS_PORT", "metricsPort"), port),
    metricsHost: String(pick("BUNDLEKIT_METRICS_HOST", "metricsHost") ?? "127.0.0.1"),
    nodeTimeoutMs: integer(pick("BUNDLEKIT_NODE_TIMEOUT_MS", "nodeTimeoutMs") ?? 3000, "nodeTimeoutMs", 100, 600_000),
    nodeRetryCount: integer(pick("BUNDLEKIT_NODE_RETRY_COUNT", "nodeRetryCount") ?? 1, "nodeRetryCount", 0, 10),
    nodeBatchSize: integer(pick("BUNDLEKIT_NODE_BATCH_SIZE", "nodeBatchSize") ?? 8, "nodeBatchSize", 1, 1000),
    shutdownGraceMs: integer(pick("BUNDLEKIT_SHUTDOWN_GRACE_MS", "shutdownGraceMs") ?? 8000, "shutdownGraceMs", 0, 600_000),
    debugMethods: boolean(pick("BUNDLEKIT_DEBUG_METHODS", "debugMethods") ?? false, "debugMethods"),
    logLevel: oneOf(pick("BUNDLEKIT_LOG_LEVEL", "logLevel") ?? "info", "logLevel", ["debug", "info", "warn", "error"] as const),
    ...sponsorship(
      rpcUrl,
      paymasterEndpoint(pick("BUNDLEKIT_PAYMASTERS", "paymasters"), pick("BUNDLEKIT_PAYMASTER_SIGNER_KEY", "paymasterSignerKey")),
      pick("BUNDLEKIT_SPONSORSHIP_POLICY", "sponsorshipPolicy"),
    ),
    testingMode: boolean(pick("BUNDLEKIT_TESTING_MODE", "testingMode") ?? false, "testingMode"),
    redirectRpc: boolean(pick("BUNDLEKIT_REDIRECT_RPC", "redirectRpc") ?? false, "redirectRpc"),
    explorerApiKey: optionalSecret(pick("BUNDLEKIT_EXPLORER_API_KEY", "explorerApiKey"), "explorerApiKey"),
    builder: builderApi(
      pick("BUNDLEKIT_BUILDER_PORT", "builderPort"),
      pick("BUNDLEKIT_BUILDER_HOST", "builderHost"),
      pick("BUNDLEKIT_BUILDER_JWT_SECRET_FILE", "builderJwtSecretFile"),
      port,
    ),
    preconfirmationKey: optionalFile(pick("BUNDLEKIT_PRECONFIRMATION_KEY_FILE", "preconfirmationKeyFile"), readPreconfirmationKey),
    bundler: engineSettings(env, json),
  };
  // In pull mode the block builder signs the bundles it pulls: the service needs no relayer.
  if (rpcUrl !== undefined && relayerKeys.length === 0 && resolveBundlerSettings(config.bundler).bundling.mode !== "pull") {
    throw new ConfigError("BUNDLEKIT_RELAYER_KEYS (or relayerKeys) is required with an RPC URL, unless BUNDLEKIT_BUNDLING_MODE is pull (the block builder signs)");
  }
  return config;
}

/** The builder API's settings, or undefined (off) without a port. */
function builderApi(portValue: unknown, host: unknown, secretFile: unknown, publicPort: number): BuilderApiSettings | undefined {
  if (portValue === undefined || portValue === "") {
    if (secretFile !== undefined && secretFile !== "") throw new ConfigError("builderJwtSecretFile is set but builderPort is not: set BUNDLEKIT_BUILDER_PORT to serve the builder API");
    return undefined;
  }
  const port = integer(portValue, "builderPort", 0, 65535);
  if (port !== 0 && port === publicPort) throw new ConfigError(`builderPort must differ from port (${publicPort})`);
  if (secretFile === undefined || secretFile === "") {
    throw new ConfigError("the builder API needs BUNDLEKIT_BUILDER_JWT_SECRET_FILE (builderJwtSecretFile): a file holding a 32-byte hex secret");
  }
  const secret = readBuilderJwtSecret(String(secretFile));
  return { port, host: String(host ?? "127.0.0.1"), jwtSecret: `0x${secret.toString("hex")}` };
}

/** What `read` makes of the file a setting names; undefined when the setting is unset. */
function optionalFile<T>(file: unknown, read: (file: string) => T): T | undefined {
  return file === undefined || file === "" ? undefined : read(String(file));
}

/**
 * A setting's text (or JSON value) in the form its rule takes: numbers, bigints and booleans from
 * their text, amounts of ether from "0.1 eth", addresses checksummed, URLs checked without echoing
 * them. A value that does not read as its kind is passed on as it is, for the engine's check to
 * name it.
 */
function coerce(value: unknown, kind: string, name: string): unknown {
  const text = String(value).trim();
  switch (kind) {
    case "integer":
      return typeof value === "string" && /^-?\d+$/.test(text) ? Number(text) : value;
    case "gas":
      return (typeof value === "string" || typeof value === "number") && /^\d+$/.test(text) ? BigInt(text) : value;
    case "wei":
      return amount(value, name);
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "address":
      return address(value, name);
    case "url":
      return parseUrl(value, name).href;
    default:
      return value;
  }
}

/** The engine settings present in the file or the environment, checked by the engine's own rules; absent ones keep the engine's defaults. */
function engineSettings(env: NodeJS.ProcessEnv, json: Source): BundlerSettingsInput {
  const settings: Record<string, Record<string, unknown>> = {};
  const set = (group: string, field: string, value: unknown) => {
    settings[group] = { ...settings[group], [field]: value };
  };
  for (const [key, [group, field]] of Object.entries(engineSettingNames)) {
    const value = env[`BUNDLEKIT_${key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`] ?? json[key];
    const rule: { kind: string } = (bundlerSettingRules[group] as Record<string, { kind: string }>)[field]!;
    if (value !== undefined && value !== "") set(group, field, coerce(value, rule.kind, key));
  }
  // Skandha's switch for the conditional relaying mode.
  if (boolean(env.BUNDLEKIT_CONDITIONAL_TRANSACTIONS ?? json.conditionalTransactions ?? false, "conditionalTransactions")) set("relaying", "mode", "conditional");
  const whitelist = json.whitelistedEntities ?? {};
  if (typeof whitelist !== "object" || whitelist === null || Array.isArray(whitelist)) {
    throw new ConfigError("whitelistedEntities must be an object {paymaster, account, factory} of address lists");
  }
  const kinds = ["paymaster", "account", "factory"] as const;
  const entities = Object.fromEntries(
    kinds.map((kind) => {
      const raw = env[`BUNDLEKIT_WHITELISTED_${kind.toUpperCase()}`] ?? (whitelist as Source)[kind] ?? [];
      const items = typeof raw === "string" ? raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0) : raw;
      if (!Array.isArray(items)) throw new ConfigError(`whitelistedEntities.${kind} must be a list of addresses`);
      return [kind, items.map((item) => address(item, `whitelistedEntities.${kind}`))];
    }),
  );
  if (kinds.some((kind) => entities[kind]!.length > 0)) set("reputation", "whitelistedEntities", entities);
  try {
    resolveBundlerSettings(settings);
  } catch (error) {
    if (!(error instanceof BundlerConfigError)) throw error;
    throw new ConfigError(`${flatName(error.setting)} ${error.problem}`);
  }
  return settings;
}

/** The flat name users set a nested setting by (`bundling.maxOperations` is `bundleSize`). */
function flatName(setting: string): string {
  const found = Object.entries(engineSettingNames).find(([, [group, field]]) => `${group}.${field}` === setting);
  return found?.[0] ?? setting;
}

function parseUrl(value: unknown, name: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new ConfigError(`${name} "${redactUrl(String(value))}" is not a valid URL`);
  }
  if (!["http:", "https:", "ws:", "wss:"].includes(url.protocol)) {
    throw new ConfigError(`${name} must be http(s) or ws(s), got ${url.protocol}`);
  }
  return url;
}

/** A URL safe to print: no credentials, no path or query (API keys often hide there); a non-URL cut short. */
export function redactUrl(value: string): string {
  if (value.includes("://")) return redactUrlParts(value);
  return value.length > 12 ? `${value.slice(0, 12)}…` : value;
}

/**
 * A SQLite file (a path or `:memory:`), or a PostgreSQL URL checked for form. Anything else that
 * starts like a URL (`scheme:`) is refused: a mistyped URL (`postgress://…`, `postgres:user:pw@db`)
 * must not start the service on a local file named after it. Never echoed: it may hold a password.
 */
function database(value: unknown): string {
  const text = String(value).trim();
  if (text.length === 0) throw new ConfigError("database (BUNDLEKIT_DATABASE) must be a SQLite file, :memory: or a postgres:// URL");
  if (/^postgres(ql)?(:|\/\/)/i.test(text)) {
    if (!isPostgresDatabase(text) || !hasHost(parsePostgresUrl(text))) {
      throw new ConfigError("database (BUNDLEKIT_DATABASE) is not a valid PostgreSQL URL; expected postgres://user:password@host:5432/database");
    }
    return text;
  }
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(text)?.[1];
  if (scheme !== undefined || text.includes("://")) {
    throw new ConfigError(
      `database (BUNDLEKIT_DATABASE) looks like a URL${scheme ? ` with the scheme "${scheme}:"` : ""}, which is not supported: ` +
        "give a postgres:// or postgresql:// URL, a SQLite file as a path (./name when its name has a colon) or :memory:",
    );
  }
  return text;
}

/** A PostgreSQL URL names a server by its host, or by a `host` parameter (a Unix socket's directory). */
function hasHost(url: URL | undefined): boolean {
  return Boolean(url && (url.host || url.searchParams.get("host")));
}

function parseEntryPoints(value: unknown): ServerConfig["entryPoints"] {
  if (value === undefined) return entryPointVersions.map((version) => ({ version, address: canonicalEntryPoints[version] }));
  const items = typeof value === "string" ? value.split(",").map((s) => s.trim()) : (value as unknown[]);
  if (!Array.isArray(items) || items.length === 0) throw new ConfigError("entryPoints must list at least one EntryPoint");
  return items.map((item) => {
    // "0xADDRESS" (a canonical one) or "0xADDRESS@0.7" or {address, version}
    const [addr, ver] = typeof item === "string" ? item.split("@") : [(item as Source).address, (item as Source).version];
    const entryAddress = address(addr, "entryPoints");
    const version =
      ver === undefined
        ? entryPointVersions.find((v) => canonicalEntryPoints[v] === entryAddress)
        : entryPointVersions.find((v) => v === String(ver));
    if (!version) {
      throw new ConfigError(
        ver === undefined
          ? `EntryPoint ${entryAddress} is not a canonical one; give its version as ${entryAddress}@0.7`
          : `EntryPoint version ${String(ver)} is not supported (use one of ${entryPointVersions.join(", ")})`,
      );
    }
    return { address: entryAddress, version };
  });
}

/**
 * The paymaster endpoint and its policy: off the embedded devnet, an endpoint that signs with a
 * key the paymasters trust never starts without a policy bounding what it signs (the devnet serves
 * its own paymasters, under this policy if given, else the open devnet one).
 */
function sponsorship(rpcUrl: unknown, endpoint: PaymasterEndpointSettings | undefined, policy: unknown) {
  const sponsorshipPolicy = policy === undefined || policy === "" ? undefined : parseSponsorshipSettings(policy);
  if (endpoint && !sponsorshipPolicy && rpcUrl !== undefined) {
    throw new ConfigError(
      "the paymaster endpoint (BUNDLEKIT_PAYMASTERS) signs only under a sponsorship policy: set BUNDLEKIT_SPONSORSHIP_POLICY " +
        "(sponsorshipPolicy) to a policy file with API keys, caps and quotas (docs/security.md)",
    );
  }
  if (sponsorshipPolicy && !endpoint && rpcUrl !== undefined) {
    throw new ConfigError("BUNDLEKIT_SPONSORSHIP_POLICY is set, but no paymaster endpoint: set BUNDLEKIT_PAYMASTERS and BUNDLEKIT_PAYMASTER_SIGNER_KEY too");
  }
  return { paymasterEndpoint: endpoint, sponsorshipPolicy };
}

/** `0xPAYMASTER@0.7,0xPAYMASTER@0.8` (or `{"0.7": "0x…"}`) and the key they trust: both or neither. */
function paymasterEndpoint(paymasters: unknown, signerKey: unknown): PaymasterEndpointSettings | undefined {
  if (paymasters === undefined && signerKey === undefined) return undefined;
  if (paymasters === undefined || signerKey === undefined) {
    throw new ConfigError("the paymaster endpoint needs both BUNDLEKIT_PAYMASTERS (paymasters) and BUNDLEKIT_PAYMASTER_SIGNER_KEY (paymasterSignerKey)");
  }
  const problem = privateKeyProblem(signerKey);
  if (problem) throw new ConfigError(`paymasterSignerKey (BUNDLEKIT_PAYMASTER_SIGNER_KEY) ${problem}`);
  const entries =
    typeof paymasters === "string"
      ? paymasters.split(",").map((item) => item.trim().split("@") as [string, string | undefined])
      : Object.entries(paymasters as Source).map(([version, paymaster]) => [String(paymaster), version] as [string, string]);
  const byVersion: Partial<Record<EntryPointVersion, Address>> = {};
  for (const [paymaster, version] of entries) {
    const known = entryPointVersions.find((v) => v === version);
    if (!known) throw new ConfigError(`paymasters: give each paymaster's EntryPoint version, as 0x…@0.7 (got "${paymaster}${version ? `@${version}` : ""}")`);
    byVersion[known] = address(paymaster, "paymasters");
  }
  return { paymasters: byVersion, signerKey: signerKey as Hex };
}

/** The metrics listener's port: unset, or a port other than the public one (0 picks a free one). */
function optionalPort(value: unknown, publicPort: number): number | undefined {
  if (value === undefined || value === "") return undefined;
  const port = integer(value, "metricsPort", 0, 65535);
  if (port !== 0 && port === publicPort) throw new ConfigError(`metricsPort must differ from port (${publicPort}): unset it to serve /metrics on the public port`);
  return port;
}

function boolean(value: unknown, name: string): boolean {
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw new ConfigError(`${name} must be true or false, got "${String(value)}"`);
}

function nonEmpty(value: unknown, name: string): string {
  const text = String(value).trim();
  if (!text || text.length > 200) throw new ConfigError(`${name} must be a non-empty name of at most 200 characters`);
  return text;
}

/** A secret string (an API key): any non-empty text, or unset. Never echoed, not even when it is rejected. */
function optionalSecret(value: unknown, name: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string" || value.trim().length === 0) throw new ConfigError(`${name} must be a non-empty string`);
  return value.trim();
}

function oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${String(value)}"`);
  return value as T;
}

/** One setting of the service: its environment variable, and its key in the config file if it has one. */
export interface Setting {
  env: string;
  key: string | undefined;
}

/**
 * Every setting the service reads, in the order `loadConfig` asks for them: an environment and a
 * file that record what they are asked answer once, with nothing set. Each variable is asked
 * first and the file's key right after it, which pairs them.
 */
export const settings: readonly Setting[] = (() => {
  const asked: { from: "env" | "file"; name: string }[] = [];
  const recording = (from: "env" | "file") =>
    new Proxy(
      {},
      {
        get(_target, name) {
          if (typeof name === "string") asked.push({ from, name });
          return undefined;
        },
      },
    );
  const found = new Map<string, Setting>([["BUNDLEKIT_CONFIG", { env: "BUNDLEKIT_CONFIG", key: undefined }]]);
  readConfig(recording("env"), recording("file"));
  asked.forEach(({ from, name }, index) => {
    if (from !== "env" || found.has(name)) return;
    const next = asked[index + 1];
    found.set(name, { env: name, key: next?.from === "file" ? next.name : undefined });
  });
  return [...found.values()];
})();

/** Every environment variable the service reads (`BUNDLEKIT_*`). */
export const settingNames: readonly string[] = settings.map((setting) => setting.env);

/**
 * The settings that hold secrets, read `Redacted` by `serverConfig`: node and submit URLs (API
 * keys), the database URL (a password), private keys.
 */
export const secretSettingNames: readonly string[] = [
  "BUNDLEKIT_RPC_URL",
  "BUNDLEKIT_RELAYER_KEYS",
  "BUNDLEKIT_PAYMASTER_SIGNER_KEY",
  "BUNDLEKIT_DATABASE",
  "BUNDLEKIT_RPC_ENDPOINT_SUBMIT",
];

/**
 * The service's settings through Effect's `Config`: each of `settingNames` from the program's
 * `ConfigProvider` (the environment by default), read as `loadConfig` reads them, with the same
 * defaults and the same one-line errors (a `Config.ConfigError` whose cause's cause is the
 * `ConfigError`). The secret ones (`secretSettingNames`) are read `Config.Redacted`, so what the
 * provider gives never prints.
 */
export function serverConfig(argv: readonly string[] = []): Config.Config<ServerConfig> {
  const read = (name: string): Config.Config<Option.Option<string | Redacted.Redacted<string>>> =>
    secretSettingNames.includes(name) ? Config.option(Config.Redacted(name)) : Config.option(Config.String(name));
  const raw = Config.all(Object.fromEntries(settingNames.map((name) => [name, read(name)])));
  const text = (value: string | Redacted.Redacted<string>) => (typeof value === "string" ? value : Redacted.value(value));
  return raw.pipe(
    Config.mapEffect((values) =>
      Effect.try({
        try: () => loadConfig(Object.fromEntries(Object.entries(values).flatMap(([name, value]) => (Option.isSome(value) ? [[name, text(value.value)]] : []))), argv),
        catch: (error) => new Config.ConfigError(new ConfigProvider.SourceError({ message: (error as Error).message, cause: error })),
      }),
    ),
  );
}
