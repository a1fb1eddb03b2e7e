// In-process stand-ins for a chain, its clock and a workload's randomness: the engine runs on
// them unchanged, so a policy can be compared on a replayed workload without a node.
export {
  createSimulatedChain,
  type SimulatedBehaviour,
  type SimulatedChain,
  type CreateSimulatedChainParameters,
  type SimulatedDelivery,
} from "./simulated-chain.ts";
export { createSimulatedClock, type SimulatedClock } from "./simulated-clock.ts";
export { seededRandom } from "./seeded-random.ts";
