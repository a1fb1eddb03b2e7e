// In-process stand-ins for a chain, its clock and a workload's randomness: the engine runs on
// them unchanged, so a policy can be compared on a replayed workload without a node.
export {
  createSimulatedChain,
  type SimulatedBehaviour,
  type SimulatedChain,
  type CreateSimulatedChainParameters,
  type SimulatedDelivery,
  type SimulatedStake,
  type SimulatedReceipt,
} from "./simulated-chain.ts";
export { createSimulatedClock, type SimulatedClock } from "./simulated-clock.ts";
export { seededRandom } from "./seeded-random.ts";
// The ports and values the simulated chain's own types name, so this entry is complete by itself.
export type { BlockSource } from "../ports/block-source.ts";
export type { ChainClient } from "../ports/chain-client.ts";
export type { StateOverride } from "../ports/eth-call.ts";
export type { HandleOpsEstimate, Simulator } from "../ports/simulator.ts";
export type { SignedTransaction } from "../ports/relayer-signer.ts";
export type { SubmittedBundle } from "../ports/submitter.ts";
export type { EntryPoint } from "../entrypoint/registry.ts";
