import {
  BundlerConfigError,
  type BundlerSettings,
  type BundlerSettingsInput,
  bundlerSettingRules,
  resolveBundlerSettings,
  type SettingRule,
} from "@bundlekit/core";
import { Config, ConfigProvider, Effect, Option, Redacted } from "effect";
import { parseEther } from "viem";

/** What `Bundler.layerConfig` reads: the engine's settings, its secret apart, and the instance's name. */
export interface BundlerConfig {
  /** The engine's settings that are set, by group and field as in `BundlerSettingsInput`; the others keep the engine's defaults. */
  readonly settings: BundlerSettingsInput;
  /** `relaying.submitUrl`: a URL that often carries an API key, so `Redacted`. */
  readonly submitUrl: Option.Option<Redacted.Redacted<string>>;
  /** `instanceId`: names this engine in the mempool's claims. */
  readonly instanceId: Option.Option<string>;
}

/** A setting's text in the form its rule takes; text that does not read as its kind is passed on for the engine's check to name. */
function coerce(text: string, rule: SettingRule): unknown {
  const value = text.trim();
  switch (rule.kind) {
    case "integer":
      return /^-?\d+$/.test(value) ? Number(value) : value;
    case "gas":
      return /^\d+$/.test(value) ? BigInt(value) : value;
    case "wei": {
      const ether = /^(\d+(?:\.\d+)?)\s*eth$/i.exec(value);
      return ether ? parseEther(ether[1]!) : /^\d+$/.test(value) ? BigInt(value) : value;
    }
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    default:
      return value;
  }
}

const entityKinds = ["paymaster", "account", "factory"] as const;

/** One group's fields that are set, coerced; `relaying.submitUrl` and the whitelist read apart. */
function groupConfig(group: keyof BundlerSettings): Config.Config<Record<string, unknown>> {
  const rules: Record<string, SettingRule> = bundlerSettingRules[group];
  const fields = Object.entries(rules).filter(
    ([field, rule]) =>
      rule.kind !== "whitelist" && !(group === "relaying" && field === "submitUrl"),
  );
  return Config.all(
    Object.fromEntries(fields.map(([field]) => [field, Config.option(Config.String(field))])),
  ).pipe(
    Config.map((values) =>
      Object.fromEntries(
        Object.entries(values).flatMap(([field, value]) =>
          Option.isSome(value) ? [[field, coerce(value.value, rules[field]!)]] : [],
        ),
      ),
    ),
    Config.nested(group),
  );
}

/** `reputation.whitelistedEntities.{paymaster,account,factory}`: comma-separated addresses. */
const whitelistConfig = Config.all(
  Object.fromEntries(entityKinds.map((kind) => [kind, Config.option(Config.String(kind))])),
).pipe(Config.nested("whitelistedEntities"), Config.nested("reputation"));

/**
 * The engine's settings through Effect's `Config`, by the nested keys of `BundlerSettingsInput`
 * (`bundling.intervalMs`, `relaying.submitUrl`, …; with `ConfigProvider.fromUnknown` the object
 * itself), plus `instanceId`. Values are text as a provider gives them: integers, gas and wei
 * (`"0.1 eth"` too) read as numbers and bigints, flags as `true`/`false`, whitelists as
 * comma-separated addresses. `relaying.submitUrl` is read `Redacted`. Every value is checked by the
 * engine's own rules (`resolveBundlerSettings`): a bad one fails with a `Config.ConfigError` naming
 * the setting (`bundling.intervalMs must be an integer ≥ 10, got "5"`).
 */
export const bundlerConfig: Config.Config<BundlerConfig> = Config.all({
  groups: Config.all(
    Object.fromEntries(
      Object.keys(bundlerSettingRules).map((group) => [
        group,
        groupConfig(group as keyof BundlerSettings),
      ]),
    ),
  ),
  whitelist: whitelistConfig,
  submitUrl: Config.option(Config.Redacted("submitUrl").pipe(Config.nested("relaying"))),
  instanceId: Config.option(Config.String("instanceId")),
}).pipe(
  Config.mapEffect(({ groups, whitelist, submitUrl, instanceId }) =>
    Effect.try({
      try: (): BundlerConfig => {
        const settings: Record<string, Record<string, unknown>> = Object.fromEntries(
          Object.entries(groups).filter(([, fields]) => Object.keys(fields).length > 0),
        );
        if (entityKinds.some((kind) => Option.isSome(whitelist[kind]!))) {
          const list = (kind: (typeof entityKinds)[number]) =>
            Option.match(whitelist[kind]!, {
              onNone: () => [],
              onSome: (text) =>
                text
                  .split(",")
                  .map((item) => item.trim())
                  .filter((item) => item.length > 0),
            });
          settings.reputation = {
            ...settings.reputation,
            whitelistedEntities: Object.fromEntries(entityKinds.map((kind) => [kind, list(kind)])),
          };
        }
        const checked: BundlerSettingsInput = settings;
        resolveBundlerSettings(withSubmitUrl(checked, submitUrl));
        return { settings: checked, submitUrl, instanceId };
      },
      catch: (error) =>
        new Config.ConfigError(
          new ConfigProvider.SourceError({
            message: error instanceof BundlerConfigError ? error.message : String(error),
            cause: error,
          }),
        ),
    }),
  ),
);

/** The settings with the secret in place, for the engine alone. */
export function withSubmitUrl(
  settings: BundlerSettingsInput,
  submitUrl: Option.Option<Redacted.Redacted<string>>,
): BundlerSettingsInput {
  return Option.match(submitUrl, {
    onNone: () => settings,
    onSome: (url) => ({
      ...settings,
      relaying: { ...settings.relaying, submitUrl: Redacted.value(url) },
    }),
  });
}
