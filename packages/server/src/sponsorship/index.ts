export { type ApiKeyRoute, byApiKey } from "./api-keys.ts";
export { type CallTargetDecoder, simpleAccountCallTargets } from "./call-targets.ts";
export {
  createConfiguredSponsorshipPolicy,
  defaultValidForSeconds,
  describeLimits,
  describeSponsorship,
  devnetSponsorLimits,
  limitsPolicy,
  type SponsorKey,
  type SponsorLimits,
  type SponsorshipSettings,
} from "./configured-policy.ts";
export {
  allOf,
  refuse,
  type SponsorshipDecision,
  type SponsorshipPolicy,
  type SponsorshipRequest,
  sponsor,
} from "./policy.ts";
export { quotaPerWindow, type SponsorQuota } from "./quota.ts";
export { capGas, type GasCaps, onlySenders, onlyTargets } from "./rules.ts";
export { parseSponsorshipSettings } from "./settings-file.ts";
