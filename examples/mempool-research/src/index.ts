// The lab as a library: generate or capture a workload, replay it through the real engine on a
// simulated chain, compare policies with intervals, and render the report (`pnpm research` is
// this, from the command line).
export { type CaptureWorkloadParameters, captureWorkload } from "./capture.ts";
export { renderChart, renderPng } from "./chart.ts";
export {
  type ExperimentParameters,
  type ExperimentReport,
  type PolicyEntry,
  type PolicyResult,
  runExperiment,
  type SeededWorkload,
  type Verdict,
} from "./experiment.ts";
export { builtInPolicy, loadPolicyFile, PolicyFileError, resolvePolicies } from "./policies.ts";
export {
  type ChainOptions,
  labSettings,
  type OperationOutcomes,
  type PolicyContext,
  type PolicyReport,
  type PolicySource,
  type ReplayOptions,
  replay,
  type Spread,
} from "./replay.ts";
export {
  type AmountField,
  generatePackedWorkload,
  isPacked,
  type PackedOperations,
  type PackedWorkload,
  packOperations,
  packWorkload,
} from "./packed-workload.ts";
export { type Scenario, type ScenarioName, scenarioNames, scenarios } from "./scenarios.ts";
export type { Interval, Metric, MetricSummary } from "./statistics.ts";
export { formatReport } from "./table.ts";
export {
  type GenerateWorkloadParameters,
  generateOperations,
  generateWorkload,
  paymasterAddress,
  senderAddress,
  type Workload,
  type WorkloadOperation,
  workloadDefaults,
} from "./workload.ts";
