// The test kit: contract suites every store and policy adapter runs against itself, realistic
// fixtures. Built on vitest (a peer dependency); never import it from
// production code.

// Contract suites
export { type MempoolStoreUnderTest, mempoolStoreContract } from "./mempool-store-contract.ts";
export {
  type ReputationStoreUnderTest,
  reputationStoreContract,
} from "./reputation-store-contract.ts";
export {
  type PreconfirmationStoreUnderTest,
  preconfirmationStoreContract,
} from "./preconfirmation-store-contract.ts";
export { mempoolPolicyContract, policyCandidate, policyLimits } from "./mempool-policy-contract.ts";

// Fixtures
export {
  type FixtureEntryOptions,
  fixtureAccount,
  fixtureChainId,
  fixtureEntry,
  fixtureFactory,
  fixturePaymaster,
  replacingNothing,
} from "./fixtures.ts";
