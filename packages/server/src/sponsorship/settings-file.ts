import { readFileSync } from "node:fs";
import { address, amount, ConfigError, integer } from "../config-values.ts";
import {
  defaultValidForSeconds,
  type SponsorKey,
  type SponsorLimits,
  type SponsorshipSettings,
} from "./configured-policy.ts";

type Source = Record<string, unknown>;

const limitFields = [
  "maxFeePerGas",
  "maxPreVerificationGas",
  "maxCostPerOperation",
  "quota",
] as const;
const topFields = ["validForSeconds", "keys", ...limitFields];
const keyFields = ["name", "apiKey", "senders", "targets", ...limitFields];
const quotaFields = ["windowSeconds", "operations", "cost"];

/** Shortest API key accepted: anything shorter can be guessed. */
const minApiKeyLength = 16;

/**
 * The sponsorship policy's settings from `BUNDLEKIT_SPONSORSHIP_POLICY` (a JSON file's path) or
 * the config file's `sponsorshipPolicy` (the object, or a path). Top-level caps and quota apply
 * to every key; a key's own replace them. Every key needs `maxCostPerOperation` and `quota`, so
 * what any key can cost is bounded. Unknown fields are refused (a misspelt cap would otherwise be
 * no cap). Errors name the setting at fault and never contain an API key.
 */
export function parseSponsorshipSettings(value: unknown): SponsorshipSettings {
  const name = "sponsorshipPolicy";
  let json: unknown = value;
  if (typeof value === "string") {
    try {
      json = JSON.parse(readFileSync(value, "utf8"));
    } catch (error) {
      // JSON.parse quotes the text around a syntax error, which may be a key: say only where it is.
      const reason =
        error instanceof SyntaxError ? "not valid JSON" : (error as Error).message.split("\n")[0];
      throw new ConfigError(
        `cannot read ${name} file ${value} (BUNDLEKIT_SPONSORSHIP_POLICY): ${reason}`,
      );
    }
  }
  const top = object(json, name, topFields);
  const keys = top.keys;
  if (!Array.isArray(keys) || keys.length === 0)
    throw new ConfigError(`${name}.keys must list at least one {name, apiKey} entry`);
  const defaults = limitsOf(top, name);
  const parsed = keys.map((entry, index) => sponsorKey(entry, `${name}.keys[${index}]`, defaults));
  const duplicate = (pick: (key: SponsorKey) => string) =>
    parsed.find((key, i) => parsed.findIndex((other) => pick(other) === pick(key)) !== i);
  const sameName = duplicate((key) => key.name);
  if (sameName) throw new ConfigError(`${name}.keys: the name "${sameName.name}" is used twice`);
  const sameKey = duplicate((key) => key.apiKey);
  if (sameKey)
    throw new ConfigError(`${name}.keys: "${sameKey.name}" has the same apiKey as another key`);
  return {
    validForSeconds:
      top.validForSeconds === undefined
        ? defaultValidForSeconds
        : integer(top.validForSeconds, `${name}.validForSeconds`, 45, 600),
    keys: parsed,
  };
}

function sponsorKey(value: unknown, path: string, defaults: Partial<SponsorLimits>): SponsorKey {
  const entry = object(value, path, keyFields);
  if (typeof entry.name !== "string" || entry.name.trim() === "" || entry.name.length > 100) {
    throw new ConfigError(`${path}.name must be a label of 1 to 100 characters`);
  }
  const label = `${path} ("${entry.name}")`;
  if (typeof entry.apiKey !== "string" || entry.apiKey.trim().length < minApiKeyLength) {
    throw new ConfigError(
      `${label}.apiKey must be a secret of at least ${minApiKeyLength} characters`,
    );
  }
  const limits = { ...defaults, ...limitsOf(entry, path) };
  for (const required of ["maxCostPerOperation", "quota"] as const) {
    if (limits[required] === undefined) {
      throw new ConfigError(
        `${label} has no ${required}: set it on the key or for all keys, so what the key can cost is bounded`,
      );
    }
  }
  return {
    ...(limits as SponsorLimits),
    name: entry.name,
    apiKey: entry.apiKey.trim(),
    senders: addresses(entry.senders, `${path}.senders`),
    targets: addresses(entry.targets, `${path}.targets`),
  };
}

/** The caps and quota present in `source`. */
function limitsOf(source: Source, path: string): Partial<SponsorLimits> {
  const limits: Partial<SponsorLimits> = {};
  if (source.maxFeePerGas !== undefined)
    limits.maxFeePerGas = amount(source.maxFeePerGas, `${path}.maxFeePerGas`);
  if (source.maxPreVerificationGas !== undefined) {
    limits.maxPreVerificationGas = BigInt(
      integer(source.maxPreVerificationGas, `${path}.maxPreVerificationGas`, 0),
    );
  }
  if (source.maxCostPerOperation !== undefined)
    limits.maxCostPerOperation = amount(source.maxCostPerOperation, `${path}.maxCostPerOperation`);
  if (source.quota !== undefined) {
    const quota = object(source.quota, `${path}.quota`, quotaFields);
    limits.quota = {
      windowSeconds: integer(quota.windowSeconds, `${path}.quota.windowSeconds`, 1, 31 * 86_400),
      operations: integer(quota.operations, `${path}.quota.operations`, 1, 1_000_000),
      cost: amount(quota.cost, `${path}.quota.cost`),
    };
  }
  return limits;
}

function addresses(value: unknown, path: string) {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0)
    throw new ConfigError(
      `${path} must be a non-empty list of addresses (leave it out to allow any)`,
    );
  return value.map((item) => address(item, path));
}

/** A JSON object with only `fields`; an unknown field is refused by name. */
function object(value: unknown, path: string, fields: readonly string[]): Source {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConfigError(`${path} must be a JSON object`);
  const unknown = Object.keys(value).find((field) => !fields.includes(field));
  if (unknown !== undefined)
    throw new ConfigError(`${path}.${unknown} is not a setting (expected ${fields.join(", ")})`);
  return value as Source;
}
