import type { BundlerSettingsInput } from "@bundlekit/core";
import type { ChainOptions } from "./replay.ts";
import type { GenerateWorkloadParameters } from "./workload.ts";

/** A named workload that exercises policies: how it is generated, the chain it runs on, and engine settings. */
export interface Scenario {
  description: string;
  workload: Partial<Omit<GenerateWorkloadParameters, "ops" | "seed">>;
  chain: ChainOptions;
  settings: BundlerSettingsInput;
}

/**
 * The lab's named scenarios. Each is a starting point: any CLI option or `replay()` parameter
 * given beside `--scenario` overrides it.
 */
export const scenarios = {
  steady: {
    description:
      "steady: load well within what blocks hold; bundles rarely fill, so policies agree",
    workload: {},
    chain: {},
    settings: {},
  },
  congestion: {
    description:
      "congestion: offered gas above block gas (3M-gas blocks, 50 ops/s); a backlog builds, the base fee rises, operations wait and expire after 30 s",
    workload: { rate: 50 },
    chain: { blockGasLimit: 3_000_000n },
    settings: { mempool: { ttlSeconds: 30 } },
  },
  "fee-spike": {
    description:
      "fee spikes: 4 rushes of 3x the arrivals bidding 10x the fees, on blocks that hold about the usual load",
    workload: {
      rate: 30,
      feeSpikes: 4,
      feeSpikeFactor: 10,
      feeSpikeRateFactor: 3,
      feeSpikeMs: 5_000,
    },
    chain: { blockGasLimit: 5_000_000n },
    settings: { mempool: { ttlSeconds: 60 } },
  },
  "spammy-sender": {
    description:
      "a spammy sender: one sender sends 30% of the operations at twice the fees, among many small ones, on busy blocks",
    workload: { rate: 40, spammerShare: 0.3, spammerFeeFactor: 2, senderSkew: 0 },
    chain: { blockGasLimit: 4_000_000n },
    settings: { mempool: { ttlSeconds: 60 } },
  },
  "paymaster-heavy": {
    description:
      "paymaster-heavy: 80% of operations sponsored by 3 staked paymasters (Zipf shares), on busy blocks",
    workload: { rate: 40, paymasterShare: 0.8, paymasters: 3 },
    chain: { blockGasLimit: 4_000_000n },
    settings: { mempool: { ttlSeconds: 60 } },
  },
} as const satisfies Record<string, Scenario>;

export type ScenarioName = keyof typeof scenarios;

export const scenarioNames = Object.keys(scenarios) as ScenarioName[];
