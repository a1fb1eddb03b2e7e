// @bundlekit/server: the stand-alone bundler service, to start from code as the command
// `bundlekit-server` starts it. Named exports only.

// The service: its settings, in this process or in a process of its own.
export { startBundlerService, type BundlerService } from "./server.ts";
export {
  type BuilderApiSettings,
  ConfigError,
  loadConfig,
  secretSettingNames,
  serverConfig,
  type ServerConfig,
  settingNames,
} from "./config.ts";
export {
  type ServiceProcess,
  type StartServiceProcessParameters,
  startServiceProcess,
} from "./service-process.ts";
export { createConsoleLogger, jsonLinesLogger, type LogLevel } from "./logger.ts";

// The builder API's wire forms, for a block builder in Node (docs/sequencer.md).
export { signBuilderJwt } from "./builder-api/builder-jwt.ts";
export type { BuilderProposalJson } from "./builder-api/builder-methods.ts";

// The ERC-7677 paymaster endpoint and the sponsorship policies it signs under.
export type { PaymasterEndpointConfig } from "./paymaster-endpoint.ts";
export {
  allOf,
  refuse,
  type SponsorshipDecision,
  type SponsorshipPolicy,
  type SponsorshipRequest,
  sponsor,
} from "./sponsorship/policy.ts";
export { type ApiKeyRoute, byApiKey } from "./sponsorship/api-keys.ts";
export { type CallTargetDecoder, simpleAccountCallTargets } from "./sponsorship/call-targets.ts";
export { quotaPerWindow, type SponsorQuota } from "./sponsorship/quota.ts";
export { capGas, type GasCaps, onlySenders, onlyTargets } from "./sponsorship/rules.ts";
export {
  createConfiguredSponsorshipPolicy,
  type SponsorKey,
  type SponsorLimits,
  type SponsorshipSettings,
} from "./sponsorship/configured-policy.ts";
