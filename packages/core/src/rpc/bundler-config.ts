import { type Address, formatEther } from "viem";
import type { Bundler } from "../engine/create-bundler.ts";
import { toQuantity } from "../userop/wire.ts";
import { expectParams, type RpcMethod } from "./methods.ts";

/** The result of `bundler_config` (spec §2.8), field for field. */
export interface BundlerConfigResult {
  chainId: number;
  flags: { testingMode: boolean; redirectRpc: boolean };
  entryPoints: string[];
  beneficiary: Address;
  relayers: Address[];
  minInclusionDenominator: number;
  throttlingSlack: number;
  banSlack: number;
  minStake: { type: "BigNumber"; hex: string };
  minUnstakeDelay: number;
  minSignerBalance: string;
  multicall: Address;
  estimationStaticBuffer: number;
  validationGasLimit: number;
  receiptLookupRange: number;
  explorerApiKey: boolean;
  conditionalTransactions: boolean;
  rpcEndpointSubmit: boolean;
  gasPriceMarkup: number;
  enforceGasPrice: boolean;
  enforceGasPriceThreshold: number;
  eip2930: boolean;
  useropsTTL: number;
  whitelistedEntities: { paymaster: Address[]; account: Address[]; factory: Address[] };
  bundleGasLimitMarkup: number;
  relayingMode: string;
  bundleInterval: number;
  bundleSize: number;
  pvgMarkup: number;
  skipBundleValidation: boolean;
  /** `safe` (traced, ERC-7562 enforced) or `unsafe` (simulation only). */
  validationMode: "safe" | "unsafe";
  /** How safe mode collects its trace (`in-process`, `js`); null in unsafe mode. */
  validationTracer: string | null;
  /** The address of the key that signs preconfirmations; null when they are unsigned (never the key). */
  preconfirmationSigner: Address | null;
}

/**
 * What the serving process knows beyond the engine: the service's flags and whether it holds an
 * explorer API key (never the key itself). Default: all off.
 */
export interface ServiceFacts {
  testingMode: boolean;
  redirectRpc: boolean;
  explorerApiKey: boolean;
}

/**
 * Encode the engine's settings as `bundler_config` answers them, in the flat shape of the spec:
 * integers as JSON numbers, `minStake` as a `{type:"BigNumber",hex}` object, `minSignerBalance` as
 * `"<amount> eth"`, EntryPoints in lower case. Secrets never leave: relayers appear as addresses,
 * and `explorerApiKey` and `rpcEndpointSubmit` only say whether one is configured. Without a
 * configured beneficiary each bundle pays its own relayer; the first relayer is shown then.
 */
export function encodeBundlerConfig(
  bundler: Pick<Bundler, "chainId" | "entryPoints" | "relayers" | "settings" | "bundling" | "preconfirmationSigner">,
  service: ServiceFacts = { testingMode: false, redirectRpc: false, explorerApiKey: false },
): BundlerConfigResult {
  const { reputation, validation, gas, bundling, relaying, tracking } = bundler.settings;
  const whitelist = reputation.whitelistedEntities;
  return {
    chainId: bundler.chainId,
    flags: { testingMode: service.testingMode, redirectRpc: service.redirectRpc },
    entryPoints: bundler.entryPoints.all.map((ep) => ep.address.toLowerCase()),
    beneficiary: bundling.beneficiary ?? bundler.relayers[0]!,
    relayers: [...bundler.relayers],
    minInclusionDenominator: reputation.minInclusionDenominator,
    throttlingSlack: reputation.throttlingSlack,
    banSlack: reputation.banSlack,
    minStake: { type: "BigNumber", hex: toQuantity(reputation.minStake) },
    minUnstakeDelay: reputation.minUnstakeDelaySeconds,
    minSignerBalance: `${formatEther(relaying.minSignerBalance)} eth`,
    multicall: relaying.multicall,
    estimationStaticBuffer: Number(gas.estimationStaticBuffer),
    validationGasLimit: Number(gas.validationGasLimit),
    receiptLookupRange: tracking.receiptLookupBlocks,
    explorerApiKey: service.explorerApiKey,
    conditionalTransactions: relaying.mode === "conditional",
    rpcEndpointSubmit: Boolean(relaying.submitUrl),
    gasPriceMarkup: gas.gasPriceMarkupPercent,
    enforceGasPrice: gas.enforceGasPrice,
    enforceGasPriceThreshold: gas.enforceGasPriceThresholdPercent,
    eip2930: bundling.accessList,
    useropsTTL: bundler.settings.mempool.ttlSeconds,
    whitelistedEntities: {
      paymaster: [...whitelist.paymaster],
      account: [...whitelist.account],
      factory: [...whitelist.factory],
    },
    bundleGasLimitMarkup: bundling.gasLimitMarkupPercent,
    relayingMode: relaying.mode,
    bundleInterval: bundler.bundling.intervalMs,
    bundleSize: bundling.maxOperations,
    pvgMarkup: gas.preVerificationGasMarkupPercent,
    skipBundleValidation: bundling.skipValidation,
    validationMode: validation.mode,
    validationTracer: validation.mode === "safe" ? validation.tracer : null,
    preconfirmationSigner: bundler.preconfirmationSigner ?? null,
  };
}

/** The `bundler_config` method, answering with `service`'s facts beside the engine's settings. */
export function bundlerConfigMethod(service?: ServiceFacts): RpcMethod {
  return async (params, bundler) => {
    expectParams(params, 0, 0);
    return encodeBundlerConfig(bundler, service);
  };
}
