import {
  BundlerConfigError,
  type BundlerSettingsInput,
  bundlerSettingRules,
  engineSettingNames,
  resolveBundlerSettings,
  type SettingRule,
} from "@bundlekit/core";
import { Config, ConfigProvider, Effect, Option, Redacted } from "effect";
import { parseEther } from "viem";

/** What `Bundler.layerConfig` reads: the engine's settings, its secret apart, and the instance's name. */
export interface BundlerConfig {
  /** The engine's settings that are set, put in their groups as in `BundlerSettingsInput`; the others keep the engine's defaults. */
  readonly settings: BundlerSettingsInput;
  /** `rpcEndpointSubmit` (`relaying.submitUrl`): a URL that often carries an API key, so `Redacted`. */
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

/** The secret among the engine's settings, read apart (`Redacted`). */
const submitUrlName = "rpcEndpointSubmit";

/** Each engine setting that is set, by its flat name (`engineSettingNames`), coerced to its rule's kind and put in its group. */
const groupsConfig: Config.Config<Record<string, Record<string, unknown>>> = Config.all(
  Object.fromEntries(
    Object.keys(engineSettingNames)
      .filter((name) => name !== submitUrlName)
      .map((name) => [name, Config.option(Config.String(name))]),
  ),
).pipe(
  Config.map((values) => {
    const groups: Record<string, Record<string, unknown>> = {};
    for (const [name, value] of Object.entries(values)) {
      if (Option.isNone(value)) continue;
      const [group, field] = engineSettingNames[name as keyof typeof engineSettingNames];
      const rule: SettingRule = (bundlerSettingRules[group] as Record<string, SettingRule>)[field]!;
      groups[group] = { ...groups[group], [field]: coerce(value.value, rule) };
    }
    return groups;
  }),
);

/** The ERC-7562 whitelist: `whitelistedPaymaster`, `whitelistedAccount`, `whitelistedFactory`, comma-separated addresses. */
const whitelistConfig = Config.all(
  Object.fromEntries(entityKinds.map((kind) => [kind, Config.option(Config.String(`whitelisted${kind[0]!.toUpperCase()}${kind.slice(1)}`))])),
);

/** The flat name of a nested setting (`bundling.intervalMs` is `bundleInterval`), as the stand-alone service names it. */
function flatName(setting: string): string {
  return Object.entries(engineSettingNames).find(([, [group, field]]) => `${group}.${field}` === setting)?.[0] ?? setting;
}

/**
 * The engine's settings through Effect's `Config`, by the names the stand-alone service gives
 * them (`engineSettingNames`: `bundleInterval`, `bundleSize`, `rpcEndpointSubmit`, …), so one
 * naming serves both: with `ConfigProvider.fromEnv()`, `ConfigProvider.constantCase` and
 * `ConfigProvider.nested("BUNDLEKIT")` they are the service's variables (`BUNDLEKIT_BUNDLE_INTERVAL`).
 * Plus `whitelistedPaymaster`, `whitelistedAccount`, `whitelistedFactory` (comma-separated
 * addresses) and `instanceId`. Values are text as a provider gives them: integers, gas and wei
 * (`"0.1 eth"` too) read as numbers and bigints, flags as `true`/`false`. `rpcEndpointSubmit` is
 * read `Redacted`. Every value is checked by the engine's own rules (`resolveBundlerSettings`): a
 * bad one fails with a `Config.ConfigError` naming the setting (`bundleInterval must be an integer ≥ 10, got "5"`).
 */
export const bundlerConfig: Config.Config<BundlerConfig> = Config.all({
  groups: groupsConfig,
  whitelist: whitelistConfig,
  submitUrl: Config.option(Config.Redacted(submitUrlName)),
  instanceId: Config.option(Config.String("instanceId")),
}).pipe(
  Config.mapEffect(({ groups, whitelist, submitUrl, instanceId }) =>
    Effect.try({
      try: (): BundlerConfig => {
        const settings: Record<string, Record<string, unknown>> = { ...groups };
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
            message: error instanceof BundlerConfigError ? `${flatName(error.setting)} ${error.problem}` : String(error),
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
