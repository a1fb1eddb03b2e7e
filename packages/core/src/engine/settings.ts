import { type Address, isAddress, parseEther } from "viem";
import { BundlerConfigError } from "../errors/bundler-config-error.ts";
import type { BundlingMode, BundlingSettings } from "../bundle/bundling-settings.ts";
import type { GasSettings } from "../gas/gas-settings.ts";
import type { MempoolSettings } from "../mempool/mempool-settings.ts";
import type { ReputationSettings } from "../reputation/reputation.ts";
import { type RelayingSettings, relayingModes } from "../submit/configured-submitter.ts";
import type { TrackingSettings } from "../submit/transaction-tracker.ts";
import { type ValidationSettings, validationModes, validationTracers } from "../validation/create-simulator.ts";
import { erc7562Limits, handleOpsCalldataOverhead } from "../validation/size-limits.ts";

export type { BundlingMode, BundlingSettings, GasSettings, MempoolSettings };

/** The engine's settings, one group per component. Immutable once the engine is created. */
export interface BundlerSettings {
  readonly mempool: MempoolSettings;
  readonly reputation: ReputationSettings;
  readonly validation: ValidationSettings;
  readonly gas: GasSettings;
  readonly bundling: BundlingSettings;
  readonly relaying: RelayingSettings;
  readonly tracking: TrackingSettings;
}

/** What `createBundler` takes: any group, any field; the rest keep their defaults. */
export type BundlerSettingsInput = { readonly [G in keyof BundlerSettings]?: Partial<BundlerSettings[G]> };

export const defaultBundlerSettings: BundlerSettings = {
  mempool: { maxSize: 10_000, ttlSeconds: 300, sameSenderCount: 4 },
  reputation: {
    minInclusionDenominator: 10,
    throttlingSlack: 10,
    banSlack: 50,
    minStake: parseEther("1"),
    minUnstakeDelaySeconds: 86_400,
    whitelistedEntities: { paymaster: [], account: [], factory: [] },
  },
  validation: {
    mode: "safe",
    tracer: "in-process",
    tracerWorkers: 2,
    p256Precompile: false,
    maxUserOperationBytes: erc7562Limits.maxUserOperationSize,
    maxPaymasterContextBytes: erc7562Limits.maxPaymasterContextSize,
    maxConcurrentSimulations: 16,
    maxQueuedSimulations: 128,
    maxSimulationWaitMs: 5_000,
  },
  gas: {
    validationGasLimit: 10_000_000n,
    executionGasLimit: 10_000_000n,
    estimationStaticBuffer: 0n,
    estimationMarkupPercent: 3,
    preVerificationGasMarkupPercent: 5,
    gasPriceMarkupPercent: 0,
    enforceGasPrice: false,
    enforceGasPriceThresholdPercent: 10,
  },
  bundling: {
    mode: "auto",
    intervalMs: 1000,
    maxOperations: 1000,
    maxGas: undefined,
    gasLimitMarkupPercent: 20,
    maxFeePerGas: undefined,
    beneficiary: undefined,
    uniqueSenders: true,
    maxCalldataBytes: erc7562Limits.maxBundleCalldataSize,
    maxContextBytes: erc7562Limits.maxBundleContextSize,
    accessList: false,
    skipValidation: false,
    claimLeaseMs: 60_000,
    proposalLeaseMs: 5_000,
    receiptTimeoutMs: 60_000,
  },
  relaying: {
    mode: "classic",
    submitUrl: undefined,
    minSignerBalance: parseEther("0.1"),
    multicall: "0xcA11bde05977b3631167028862bE2a173976CA11",
  },
  tracking: {
    blockPollingIntervalMs: 500,
    replaceAfterBlocks: 3,
    feeBumpPercent: 15,
    maxAttempts: 3,
    reorgDepth: 12,
    receiptLookupBlocks: 1024,
  },
};

/** How one setting is checked. Integers are JS numbers; `gas` and `wei` are bigints. */
export type SettingRule =
  | { readonly kind: "integer"; readonly min: number; readonly max?: number }
  | { readonly kind: "gas"; readonly min: bigint }
  | { readonly kind: "wei"; readonly optional?: true }
  | { readonly kind: "boolean" }
  | { readonly kind: "oneOf"; readonly values: readonly string[] }
  | { readonly kind: "address"; readonly optional?: true }
  | { readonly kind: "url"; readonly optional?: true }
  | { readonly kind: "whitelist" };

const integer = (min: number, max?: number): SettingRule => (max === undefined ? { kind: "integer", min } : { kind: "integer", min, max });
const gas = (min: bigint): SettingRule => ({ kind: "gas", min });
const flag: SettingRule = { kind: "boolean" };
const percent = integer(0, 1000);

/** The range or form of every setting, as `resolveBundlerSettings` checks it: one table the service's parser shares. */
export const bundlerSettingRules: { readonly [G in keyof BundlerSettings]: { readonly [F in keyof BundlerSettings[G]]-?: SettingRule } } = {
  mempool: { maxSize: integer(1), ttlSeconds: integer(0), sameSenderCount: integer(1, 10_000) },
  reputation: {
    minInclusionDenominator: integer(1),
    throttlingSlack: integer(0),
    banSlack: integer(0),
    minStake: { kind: "wei" },
    minUnstakeDelaySeconds: integer(0),
    whitelistedEntities: { kind: "whitelist" },
  },
  validation: {
    mode: { kind: "oneOf", values: validationModes },
    tracer: { kind: "oneOf", values: validationTracers },
    tracerWorkers: integer(0, 64),
    p256Precompile: flag,
    maxUserOperationBytes: integer(1),
    maxPaymasterContextBytes: integer(1),
    maxConcurrentSimulations: integer(1, 10_000),
    maxQueuedSimulations: integer(0, 100_000),
    maxSimulationWaitMs: integer(1, 600_000),
  },
  gas: {
    validationGasLimit: gas(21_000n),
    executionGasLimit: gas(21_000n),
    estimationStaticBuffer: gas(0n),
    estimationMarkupPercent: percent,
    preVerificationGasMarkupPercent: percent,
    gasPriceMarkupPercent: percent,
    enforceGasPrice: flag,
    enforceGasPriceThresholdPercent: integer(0, 100),
  },
  bundling: {
    mode: { kind: "oneOf", values: ["auto", "manual", "pull"] },
    intervalMs: integer(10),
    maxOperations: integer(1),
    maxGas: { kind: "gas", min: 21_000n },
    gasLimitMarkupPercent: percent,
    maxFeePerGas: { kind: "wei", optional: true },
    beneficiary: { kind: "address", optional: true },
    uniqueSenders: flag,
    maxCalldataBytes: integer(1),
    maxContextBytes: integer(1),
    accessList: flag,
    skipValidation: flag,
    claimLeaseMs: integer(1000),
    proposalLeaseMs: integer(100),
    receiptTimeoutMs: integer(0),
  },
  relaying: {
    mode: { kind: "oneOf", values: relayingModes },
    submitUrl: { kind: "url", optional: true },
    minSignerBalance: { kind: "wei" },
    multicall: { kind: "address" },
  },
  tracking: {
    blockPollingIntervalMs: integer(10),
    replaceAfterBlocks: integer(1),
    feeBumpPercent: integer(10, 1000),
    maxAttempts: integer(1),
    reorgDepth: integer(0),
    receiptLookupBlocks: integer(1),
  },
};

/** Settings whose absence means "derive it": they may be `undefined`. */
const derivable = new Set(["bundling.maxGas"]);

/**
 * The engine's settings: `input` over the defaults, every field checked against
 * `bundlerSettingRules`, and the whole frozen. Throws `BundlerConfigError` naming the field
 * (`bundling.maxOperations`) for an unknown group or field, a value out of range, or limits that
 * contradict each other.
 */
export function resolveBundlerSettings(input: BundlerSettingsInput = {}): BundlerSettings {
  for (const group of Object.keys(input)) {
    if (!(group in defaultBundlerSettings)) throw new BundlerConfigError(group, `is not a settings group (${Object.keys(defaultBundlerSettings).join(", ")})`);
  }
  const settings: BundlerSettings = Object.freeze({
    mempool: resolveGroup("mempool", input.mempool) as MempoolSettings,
    reputation: resolveGroup("reputation", input.reputation) as ReputationSettings,
    validation: resolveGroup("validation", input.validation) as ValidationSettings,
    gas: resolveGroup("gas", input.gas) as GasSettings,
    bundling: resolveGroup("bundling", input.bundling) as BundlingSettings,
    relaying: resolveGroup("relaying", input.relaying) as RelayingSettings,
    tracking: resolveGroup("tracking", input.tracking) as TrackingSettings,
  });
  checkSizeLimits(settings);
  return settings;
}

/** One group: the given fields over the defaults, each checked against its rule, frozen. */
function resolveGroup(group: keyof BundlerSettings, given: object = {}): object {
  const defaults = new Map(Object.entries(defaultBundlerSettings[group]));
  const fields = new Map(Object.entries(given));
  const rules = new Map<string, SettingRule>(Object.entries(bundlerSettingRules[group]));
  for (const field of fields.keys()) {
    if (!rules.has(field)) throw new BundlerConfigError(`${group}.${field}`, `is not a setting of ${group} (${[...rules.keys()].join(", ")})`);
  }
  const values = [...rules].map(([field, rule]) => {
    const name = `${group}.${field}`;
    const value = fields.get(field) ?? defaults.get(field);
    return [field, value === undefined && (derivable.has(name) || ("optional" in rule && rule.optional)) ? undefined : checkSetting(name, rule, value)];
  });
  return Object.freeze(Object.fromEntries(values));
}

/** `value` checked against `rule`, in the form the engine keeps it; `BundlerConfigError` naming `name` otherwise. */
export function checkSetting(name: string, rule: SettingRule, value: unknown): unknown {
  const got = `got "${typeof value === "bigint" ? value.toString() : String(value)}"`;
  switch (rule.kind) {
    case "integer": {
      const max = rule.max ?? Number.MAX_SAFE_INTEGER;
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < rule.min || value > max) {
        throw new BundlerConfigError(name, `must be an integer from ${rule.min} to ${max}, ${got}`);
      }
      return value;
    }
    case "gas":
      if (typeof value !== "bigint" || value < rule.min) throw new BundlerConfigError(name, `must be an integer (bigint) of at least ${rule.min}, ${got}`);
      return value;
    case "wei":
      if (typeof value !== "bigint" || value < 0n) throw new BundlerConfigError(name, `must be an amount of wei (a bigint of at least 0), ${got}`);
      return value;
    case "boolean":
      if (typeof value !== "boolean") throw new BundlerConfigError(name, `must be true or false, ${got}`);
      return value;
    case "oneOf":
      if (typeof value !== "string" || !rule.values.includes(value)) throw new BundlerConfigError(name, `must be one of ${rule.values.join(", ")}, ${got}`);
      return value;
    case "address":
      if (typeof value !== "string" || !isAddress(value, { strict: false })) throw new BundlerConfigError(name, `must be an address, ${got}`);
      return value;
    case "url":
      // Never echoed: a node URL carries its API key.
      if (typeof value !== "string" || !/^(https?|wss?):\/\/[^\s]+$/.test(value)) throw new BundlerConfigError(name, "must be an http(s) or ws(s) URL");
      return value;
    case "whitelist":
      return checkWhitelist(name, value);
  }
}

function checkWhitelist(name: string, value: unknown): ReputationSettings["whitelistedEntities"] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BundlerConfigError(name, "must be an object {paymaster, account, factory} of address lists");
  }
  const lists = value as Record<string, unknown>;
  const kinds = ["paymaster", "account", "factory"] as const;
  for (const kind of Object.keys(lists)) {
    if (!(kinds as readonly string[]).includes(kind)) throw new BundlerConfigError(`${name}.${kind}`, "is not an entity kind (paymaster, account, factory)");
  }
  const addresses = (kind: (typeof kinds)[number]): readonly Address[] => {
    const list = lists[kind] ?? [];
    if (!Array.isArray(list)) throw new BundlerConfigError(`${name}.${kind}`, "must be a list of addresses");
    for (const item of list) checkSetting(`${name}.${kind}`, { kind: "address" }, item);
    return Object.freeze([...list]);
  };
  return Object.freeze({ paymaster: addresses("paymaster"), account: addresses("account"), factory: addresses("factory") });
}

/**
 * An operation admitted within `validation.maxUserOperationBytes` and
 * `validation.maxPaymasterContextBytes` must fit a bundle alone: otherwise it would wait in the
 * pool for ever.
 */
function checkSizeLimits({ validation, bundling }: BundlerSettings): void {
  const loneOperationCalldata = handleOpsCalldataOverhead + 32 + validation.maxUserOperationBytes;
  if (loneOperationCalldata > bundling.maxCalldataBytes) {
    throw new BundlerConfigError(
      "bundling.maxCalldataBytes",
      `(${bundling.maxCalldataBytes}) must hold one operation of validation.maxUserOperationBytes (${loneOperationCalldata} bytes of handleOps calldata)`,
    );
  }
  if (validation.maxPaymasterContextBytes > bundling.maxContextBytes) {
    throw new BundlerConfigError(
      "bundling.maxContextBytes",
      `(${bundling.maxContextBytes}) must be at least validation.maxPaymasterContextBytes (${validation.maxPaymasterContextBytes})`,
    );
  }
}

/** Several inputs layered group by group, later fields over earlier ones (defaults, then a file, then overrides). */
export function mergeBundlerSettings(...inputs: readonly (BundlerSettingsInput | undefined)[]): BundlerSettingsInput {
  const layered = <G extends keyof BundlerSettings>(group: G): Partial<BundlerSettings[G]> => Object.assign({}, ...inputs.map((input) => input?.[group]));
  return {
    mempool: layered("mempool"),
    reputation: layered("reputation"),
    validation: layered("validation"),
    gas: layered("gas"),
    bundling: layered("bundling"),
    relaying: layered("relaying"),
    tracking: layered("tracking"),
  };
}

type SettingPath = { [G in keyof BundlerSettings]: readonly [G, keyof BundlerSettings[G]] }[keyof BundlerSettings];

/**
 * Each engine setting under the flat name users know it by (Skandha's, where it has one), its one
 * name outside the nested `BundlerSettingsInput`: the stand-alone service's config-file key and
 * environment variable (`BUNDLEKIT_` + the name in UPPER_SNAKE case), and the Effect face's
 * `Config` key.
 */
export const engineSettingNames = {
  bundleInterval: ["bundling", "intervalMs"],
  bundleSize: ["bundling", "maxOperations"],
  maxBundleGas: ["bundling", "maxGas"],
  bundlingMode: ["bundling", "mode"],
  beneficiary: ["bundling", "beneficiary"],
  uniqueSendersPerBundle: ["bundling", "uniqueSenders"],
  bundleGasLimitMarkup: ["bundling", "gasLimitMarkupPercent"],
  maxBundleFeePerGas: ["bundling", "maxFeePerGas"],
  maxBundleCalldataSize: ["bundling", "maxCalldataBytes"],
  maxBundleContextSize: ["bundling", "maxContextBytes"],
  eip2930: ["bundling", "accessList"],
  skipBundleValidation: ["bundling", "skipValidation"],
  bundleClaimLeaseMs: ["bundling", "claimLeaseMs"],
  proposalLeaseMs: ["bundling", "proposalLeaseMs"],
  maxMempoolSize: ["mempool", "maxSize"],
  useropsTTL: ["mempool", "ttlSeconds"],
  sameSenderMempoolCount: ["mempool", "sameSenderCount"],
  minInclusionDenominator: ["reputation", "minInclusionDenominator"],
  throttlingSlack: ["reputation", "throttlingSlack"],
  banSlack: ["reputation", "banSlack"],
  minStake: ["reputation", "minStake"],
  minUnstakeDelay: ["reputation", "minUnstakeDelaySeconds"],
  validationMode: ["validation", "mode"],
  validationTracer: ["validation", "tracer"],
  tracerWorkers: ["validation", "tracerWorkers"],
  p256Precompile: ["validation", "p256Precompile"],
  maxUserOperationSize: ["validation", "maxUserOperationBytes"],
  maxPaymasterContextSize: ["validation", "maxPaymasterContextBytes"],
  maxConcurrentSimulations: ["validation", "maxConcurrentSimulations"],
  maxQueuedSimulations: ["validation", "maxQueuedSimulations"],
  maxSimulationWaitMs: ["validation", "maxSimulationWaitMs"],
  validationGasLimit: ["gas", "validationGasLimit"],
  executionGasLimit: ["gas", "executionGasLimit"],
  estimationStaticBuffer: ["gas", "estimationStaticBuffer"],
  estimationGasMarkupPercent: ["gas", "estimationMarkupPercent"],
  pvgMarkup: ["gas", "preVerificationGasMarkupPercent"],
  gasPriceMarkup: ["gas", "gasPriceMarkupPercent"],
  enforceGasPrice: ["gas", "enforceGasPrice"],
  enforceGasPriceThreshold: ["gas", "enforceGasPriceThresholdPercent"],
  relayingMode: ["relaying", "mode"],
  rpcEndpointSubmit: ["relaying", "submitUrl"],
  minSignerBalance: ["relaying", "minSignerBalance"],
  multicall: ["relaying", "multicall"],
  blockPollingInterval: ["tracking", "blockPollingIntervalMs"],
  bundleReplaceAfterBlocks: ["tracking", "replaceAfterBlocks"],
  bundleFeeBumpPercent: ["tracking", "feeBumpPercent"],
  maxBundleAttempts: ["tracking", "maxAttempts"],
  reorgDepth: ["tracking", "reorgDepth"],
  receiptLookupRange: ["tracking", "receiptLookupBlocks"],
} as const satisfies Record<string, SettingPath>;
