import { type Clock, systemClock } from "@bundlekit/core";
import { type Address, formatEther, formatGwei, parseEther, parseGwei } from "viem";
import { byApiKey } from "./api-keys.ts";
import { allOf, type SponsorshipPolicy } from "./policy.ts";
import { quotaPerWindow, type SponsorQuota } from "./quota.ts";
import { capGas, type GasCaps, onlySenders, onlyTargets } from "./rules.ts";

/** What a sponsor pays for: per operation (the caps) and over time (the quota). */
export interface SponsorLimits extends GasCaps {
  quota: SponsorQuota;
}

/** One API key of the configured policy: who may use it, and what it pays for. */
export interface SponsorKey extends SponsorLimits {
  /** A label for start-up lines and docs; the key itself is never printed. */
  name: string;
  /** The secret callers present (`?apikey=` in the URL, or the `x-api-key` header). */
  apiKey: string;
  /** Sponsor only these senders. Absent: any sender. */
  senders?: readonly Address[] | undefined;
  /** Sponsor only calls to these targets (decoded from SimpleAccount-style callData). Absent: any. */
  targets?: readonly Address[] | undefined;
}

/** The built-in policy's settings (`BUNDLEKIT_SPONSORSHIP_POLICY`, see docs/security.md). */
export interface SponsorshipSettings {
  /** Seconds a signature stays valid, from the latest block's time. */
  validForSeconds: number;
  keys: readonly SponsorKey[];
}

/** Seconds a signature stays valid unless the settings say otherwise. */
export const defaultValidForSeconds = 90;

/** The caps and the quota of `limits`, in that order (the quota last, so it counts only what passed the caps). */
export function limitsPolicy(limits: SponsorLimits, clock: Clock = systemClock): SponsorshipPolicy {
  return allOf(capGas(limits), quotaPerWindow(limits.quota, clock));
}

/**
 * The built-in configurable policy: each API key with its allowlists, caps and quota; any other
 * caller refused. Quotas run on `clock`.
 */
export function createConfiguredSponsorshipPolicy(
  settings: SponsorshipSettings,
  clock: Clock = systemClock,
): SponsorshipPolicy {
  return byApiKey(
    settings.keys.map((key) => ({
      apiKey: key.apiKey,
      policy: allOf(
        ...(key.senders ? [onlySenders(key.senders)] : []),
        ...(key.targets ? [onlyTargets(key.targets)] : []),
        limitsPolicy(key, clock),
      ),
    })),
  );
}

/**
 * What the embedded devnet sponsors without an API key (its paymasters hold 10 ETH each, of a
 * public test key): open to any caller, still capped.
 */
export const devnetSponsorLimits: SponsorLimits = {
  maxFeePerGas: parseGwei("100"),
  maxPreVerificationGas: 1_000_000n,
  maxCostPerOperation: parseEther("0.05"),
  quota: { windowSeconds: 3600, operations: 1000, cost: parseEther("1") },
};

/** `limits` in one line, for the start-up lines. */
export function describeLimits(limits: SponsorLimits): string {
  const perOperation = [
    limits.maxFeePerGas === undefined
      ? undefined
      : `maxFeePerGas ${formatGwei(limits.maxFeePerGas)} gwei`,
    limits.maxPreVerificationGas === undefined
      ? undefined
      : `preVerificationGas ${limits.maxPreVerificationGas}`,
    `cost ${formatEther(limits.maxCostPerOperation)} ETH`,
  ].filter((part) => part !== undefined);
  const { quota } = limits;
  return `per operation at most ${perOperation.join(", ")}; at most ${quota.operations} operations and ${formatEther(quota.cost)} ETH per ${quota.windowSeconds} s`;
}

/**
 * The policy in one line for the start-up lines: the configured keys by name (never the keys),
 * or, without settings, the open devnet policy and its limits.
 */
export function describeSponsorship(settings: SponsorshipSettings | undefined): string {
  if (!settings)
    return `open devnet policy, no API key needed; ${describeLimits(devnetSponsorLimits)}`;
  const names = settings.keys.map((key) => key.name).join(", ");
  return `${settings.keys.length} API key${settings.keys.length === 1 ? "" : "s"} (${names}); signatures valid ${settings.validForSeconds} s`;
}
