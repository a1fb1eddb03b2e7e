import type { EntryPointVersion, RpcRequestContext, UserOperation } from "@bundlekit/core";
import type { Address } from "viem";

/** What a sponsorship policy is asked: one ERC-7677 request, checked for chain and EntryPoint. */
export interface SponsorshipRequest {
  /**
   * `pm_getPaymasterStubData` (for estimation: the data is signed by no key the paymaster trusts,
   * and gas fields may still be zero) or `pm_getPaymasterData` (a signature the paymaster honours).
   */
  method: "pm_getPaymasterStubData" | "pm_getPaymasterData";
  /** The operation as it will be signed: the paymaster and (v0.7+) its gas limits filled in. */
  userOperation: UserOperation;
  entryPoint: { address: Address; version: EntryPointVersion };
  /** The paymaster that would pay. */
  paymaster: Address;
  chainId: number;
  /** The API key the caller presented, if any. A secret: never log it or put it in a message. */
  apiKey: string | undefined;
  /** ERC-7677's fourth parameter as sent (`{}` when absent). */
  context: Readonly<Record<string, unknown>>;
  /** The URL and headers of the HTTP request (or WebSocket upgrade) the call came with. */
  request: RpcRequestContext;
}

/** A policy's answer: sponsor, or refuse with a reason the caller reads (naming the cap and its limit). */
export type SponsorshipDecision =
  | { sponsor: true }
  | { sponsor: false; reason: string; data?: Record<string, unknown> };

/**
 * Decides whether the paymaster endpoint signs. Policies are values: build them from the
 * building blocks (`onlySenders`, `onlyTargets`, `capGas`, `quotaPerWindow`, `byApiKey`) and
 * combine them with `allOf`. A policy that keeps counts (a quota) records a request when it
 * answers `sponsor`, so put it last.
 */
export type SponsorshipPolicy = (
  request: SponsorshipRequest,
) => SponsorshipDecision | Promise<SponsorshipDecision>;

/** The decision to sponsor. */
export const sponsor: SponsorshipDecision = { sponsor: true };

/** A refusal with its reason and, for the error's `data`, the facts behind it. */
export function refuse(reason: string, data?: Record<string, unknown>): SponsorshipDecision {
  return data === undefined ? { sponsor: false, reason } : { sponsor: false, reason, data };
}

/** Every policy in order; the first refusal is the answer, and later policies are not asked. */
export function allOf(...policies: readonly SponsorshipPolicy[]): SponsorshipPolicy {
  return async (request) => {
    for (const policy of policies) {
      const decision = await policy(request);
      if (!decision.sponsor) return decision;
    }
    return sponsor;
  };
}
