import { type Address, formatEther } from "viem";
import type { Bundler } from "../engine/create-bundler.ts";
import { toQuantity } from "../userop/wire.ts";

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
}

/**
 * Encode the engine's configuration as `bundler_config` answers it: integers as JSON numbers,
 * `minStake` as a `{type:"BigNumber",hex}` object, `minSignerBalance` as `"<amount> eth"`,
 * EntryPoints in lower case. Secrets never leave: relayers appear as addresses, and
 * `explorerApiKey` and `rpcEndpointSubmit` only say whether one is configured. Without a
 * configured beneficiary each bundle pays its own relayer; the first relayer is shown then.
 */
export function encodeBundlerConfig(
  bundler: Pick<Bundler, "chainId" | "entryPoints" | "relayers" | "config">,
): BundlerConfigResult {
  const { config } = bundler;
  const whitelist = config.whitelistedEntities;
  return {
    chainId: bundler.chainId,
    flags: { testingMode: config.testingMode, redirectRpc: config.redirectRpc },
    entryPoints: bundler.entryPoints.all.map((ep) => ep.address.toLowerCase()),
    beneficiary: config.beneficiary ?? bundler.relayers[0]!,
    relayers: [...bundler.relayers],
    minInclusionDenominator: config.minInclusionDenominator,
    throttlingSlack: config.throttlingSlack,
    banSlack: config.banSlack,
    minStake: { type: "BigNumber", hex: toQuantity(config.minStake) },
    minUnstakeDelay: config.minUnstakeDelay,
    minSignerBalance: `${formatEther(config.minSignerBalance)} eth`,
    multicall: config.multicall,
    estimationStaticBuffer: Number(config.estimationStaticBuffer),
    validationGasLimit: Number(config.validationGasLimit),
    receiptLookupRange: Number(config.receiptLookupRange),
    explorerApiKey: Boolean(config.explorerApiKey),
    conditionalTransactions: config.conditionalTransactions,
    rpcEndpointSubmit: Boolean(config.rpcEndpointSubmit),
    gasPriceMarkup: config.gasPriceMarkup,
    enforceGasPrice: config.enforceGasPrice,
    enforceGasPriceThreshold: config.enforceGasPriceThreshold,
    eip2930: config.eip2930,
    useropsTTL: config.useropsTTL,
    whitelistedEntities: {
      paymaster: [...whitelist.paymaster],
      account: [...whitelist.account],
      factory: [...whitelist.factory],
    },
    bundleGasLimitMarkup: Number(config.bundleGasLimitMarkup),
    relayingMode: config.relayingMode,
    bundleInterval: config.bundleInterval,
    bundleSize: config.bundleSize,
    pvgMarkup: Number(config.pvgMarkup),
    skipBundleValidation: config.skipBundleValidation,
    validationMode: config.validationMode,
    validationTracer: config.validationMode === "safe" ? config.validationTracer : null,
  };
}
