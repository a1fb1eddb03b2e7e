import {
  connectionLimitDefaults,
  endpointDefaults,
  type JsonRpcServerOptions,
  webSocketDefaults,
} from "@bundlekit/transport-jsonrpc";
import { ConfigError, integer } from "./config-values.ts";

/** Who may reach the JSON-RPC endpoint from a browser, and how much one client may hold (docs/security.md). */
export type TransportSettings = Required<
  Pick<
    JsonRpcServerOptions,
    | "allowedHosts"
    | "allowedOrigins"
    | "maxConnections"
    | "maxConnectionsPerIp"
    | "maxInFlightRequests"
    | "maxUnsentBytes"
    | "webSocketIdleTimeoutMs"
    | "webSocketPingIntervalMs"
  >
>;

/** A comma-separated list (or a JSON array) of items each checked by `item`; undefined when not set. */
function list(value: unknown, name: string, item: (text: string, name: string) => string): string[] | undefined {
  if (value === undefined) return undefined;
  const items = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(items)) throw new ConfigError(`${name} must be a comma-separated list (an array in the file)`);
  return items.map((entry) => String(entry).trim()).filter((entry) => entry.length > 0).map((entry) => item(entry, name));
}

function hostName(text: string, name: string): string {
  if (text === "*" || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(text)) return text.toLowerCase();
  throw new ConfigError(`${name}: "${text.slice(0, 100)}" is not a host name; list names such as bundler.example.org (no scheme or port), or * for any`);
}

function origin(text: string, name: string): string {
  if (text === "*" || /^[a-z][a-z0-9+.-]*:\/\/[^/\s?#]+$/i.test(text.replace(/\/$/, ""))) return text.replace(/\/$/, "").toLowerCase();
  throw new ConfigError(`${name}: "${text.slice(0, 100)}" is not an origin; list scheme://host[:port] such as https://app.example.org, or * for any`);
}

/** The transport's settings from the file or the environment (`pick`), each with the transport's default. */
export function transportSettings(pick: (envName: string, key: string) => unknown): TransportSettings {
  const count = (envName: string, key: keyof TransportSettings, fallback: number, min: number) =>
    integer(pick(envName, key) ?? fallback, key, min);
  return {
    allowedHosts: list(pick("BUNDLEKIT_ALLOWED_HOSTS", "allowedHosts"), "allowedHosts", hostName) ?? [...endpointDefaults.allowedHosts],
    allowedOrigins: list(pick("BUNDLEKIT_ALLOWED_ORIGINS", "allowedOrigins"), "allowedOrigins", origin) ?? [],
    maxConnections: count("BUNDLEKIT_MAX_CONNECTIONS", "maxConnections", connectionLimitDefaults.maxConnections, 1),
    maxConnectionsPerIp: count("BUNDLEKIT_MAX_CONNECTIONS_PER_IP", "maxConnectionsPerIp", connectionLimitDefaults.maxConnectionsPerIp, 1),
    maxInFlightRequests: count("BUNDLEKIT_MAX_IN_FLIGHT_REQUESTS", "maxInFlightRequests", endpointDefaults.maxInFlightRequests, 1),
    maxUnsentBytes: count("BUNDLEKIT_MAX_UNSENT_BYTES", "maxUnsentBytes", endpointDefaults.maxUnsentBytes, 1024),
    webSocketIdleTimeoutMs: count("BUNDLEKIT_WS_IDLE_TIMEOUT_MS", "webSocketIdleTimeoutMs", webSocketDefaults.webSocketIdleTimeoutMs, 0),
    webSocketPingIntervalMs: count("BUNDLEKIT_WS_PING_INTERVAL_MS", "webSocketPingIntervalMs", webSocketDefaults.webSocketPingIntervalMs, 0),
  };
}
