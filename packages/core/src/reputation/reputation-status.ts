import type { ReputationEntry } from "../ports/reputation-store.ts";

/** An entity's standing under ERC-7562: `ok`, `throttled` (limited mempool share) or `banned`. */
export type ReputationStatus = "ok" | "throttled" | "banned";

/** The ERC-7562 reputation constants (all configurable; see `BundlerConfig`). */
export interface ReputationParameters {
  /** Expected inclusions are `opsSeen / minInclusionDenominator`. ERC-7562: 10. */
  minInclusionDenominator: number;
  /** ERC-7562: 10. */
  throttlingSlack: number;
  /** ERC-7562: 50. */
  banSlack: number;
}

/**
 * ERC-7562's formula: with `maxSeen = floor(opsSeen / minInclusionDenominator)`, an entity is
 * banned when `maxSeen > opsIncluded + banSlack`, throttled when
 * `maxSeen > opsIncluded + throttlingSlack`, and ok otherwise (new entities too).
 */
export function reputationStatus(
  entry: Pick<ReputationEntry, "opsSeen" | "opsIncluded">,
  parameters: ReputationParameters,
): ReputationStatus {
  const maxSeen = Math.floor(entry.opsSeen / parameters.minInclusionDenominator);
  if (maxSeen > entry.opsIncluded + parameters.banSlack) return "banned";
  if (maxSeen > entry.opsIncluded + parameters.throttlingSlack) return "throttled";
  return "ok";
}
