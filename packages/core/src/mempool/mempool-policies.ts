import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import { createDefaultMempoolPolicy } from "./default-mempool-policy.ts";
import type { Erc7562AdmissionOptions } from "./erc7562-admission.ts";
import { createFairMempoolPolicy } from "./fair-mempool-policy.ts";
import { createFifoMempoolPolicy } from "./fifo-mempool-policy.ts";
import { createProfitMempoolPolicy } from "./profit-mempool-policy.ts";

/** The shipped policies by name (`BUNDLEKIT_MEMPOOL_POLICY`); each call makes a fresh one. */
export const mempoolPolicies = {
  default: createDefaultMempoolPolicy,
  fifo: createFifoMempoolPolicy,
  fair: createFairMempoolPolicy,
  profit: createProfitMempoolPolicy,
} as const satisfies Record<string, (options?: Erc7562AdmissionOptions) => MempoolPolicy>;

export type MempoolPolicyName = keyof typeof mempoolPolicies;

export const mempoolPolicyNames = Object.keys(mempoolPolicies) as MempoolPolicyName[];
