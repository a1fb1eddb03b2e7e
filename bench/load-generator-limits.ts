/**
 * The service's flood limits for a benchmark that offers `concurrency` requests at once from one
 * address. The caps that shed a flood (-32005) would shed the offered load itself, and these
 * benchmarks measure what the engine does with all of it; with `keepSimulationCaps` the service
 * keeps its own caps on simulations (only the per-address connection cap, which one generator on
 * one address would hit, is raised), to measure how it sheds what it cannot take.
 */
export function loadGeneratorLimits(
  concurrency: number,
  keepSimulationCaps = false,
): Record<string, string> {
  const connections = String(Math.max(1000, 2 * concurrency));
  return {
    BUNDLEKIT_MAX_CONNECTIONS: connections,
    BUNDLEKIT_MAX_CONNECTIONS_PER_IP: connections,
    ...(keepSimulationCaps
      ? {}
      : {
          BUNDLEKIT_MAX_QUEUED_SIMULATIONS: String(Math.max(128, concurrency)),
          BUNDLEKIT_MAX_SIMULATION_WAIT_MS: "600000",
        }),
  };
}
