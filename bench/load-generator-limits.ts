/**
 * The service's flood limits for a benchmark that offers `concurrency` requests at once from one
 * address. The caps that shed a flood (-32005) would shed the offered load itself, and these
 * benchmarks measure what the engine does with all of it.
 */
export function loadGeneratorLimits(concurrency: number): Record<string, string> {
  const connections = String(Math.max(1000, 2 * concurrency));
  return {
    BUNDLEKIT_MAX_CONNECTIONS: connections,
    BUNDLEKIT_MAX_CONNECTIONS_PER_IP: connections,
    BUNDLEKIT_MAX_QUEUED_SIMULATIONS: String(Math.max(32, concurrency)),
  };
}
