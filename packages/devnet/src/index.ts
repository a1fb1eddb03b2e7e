export {
  CANONICAL_DEPLOYMENTS,
  type CanonicalDeployment,
  CREATE2_DEPLOYER,
  ENTRY_POINT_VERSIONS,
  type EntryPointVersion,
  PLACED_RELEASES,
  SIMPLE_7702_ACCOUNT,
} from "./addresses.ts";
export {
  type AnvilInstance,
  resolveAnvilBinary,
  type StartAnvilOptions,
  startAnvil,
} from "./anvil.ts";
export { devnetChain } from "./chain.ts";
export { type ContractArtifact, type ContractName, loadArtifact } from "./artifacts.ts";
export { type DeployOptions, type DevnetDeployment, deployErc4337Contracts } from "./deploy.ts";
export { type Devnet, type StartDevnetOptions, startDevnet } from "./devnet.ts";
export { DEVNET_MNEMONIC, deriveDevnetKeys } from "./keys.ts";
export { deployGasWorkloads, GAS_WORKLOADS, gasWorkloadsAbi } from "./gas-workloads.ts";
export { type L1FeeModel, placeL1FeeStandIn } from "./l1-fee-stand-ins.ts";
export {
  DEVNET_PAYMASTER_SIGNER_KEY,
  type DevnetPaymasters,
  PAYMASTER_DEPOSIT,
  PAYMASTER_STAKE,
  paymasterLines,
  type VerifyingPaymasterDataParameters,
  verifyingPaymasterData,
} from "./paymasters.ts";
export { type ToSimpleAccountParameters, toSimpleAccount } from "./simple-account.ts";
export { deploySimple7702Accounts, SIMPLE_7702_ACCOUNTS_BEFORE_V08 } from "./simple-7702-accounts.ts";
export { deployRuleProbes, type RuleProbes, ruleProbeAbis } from "./rule-probes.ts";
