/** One JSON-RPC method the engine calls on its node. */
export interface ChainMethod {
  /** What the engine asks it for. */
  purpose: string;
  /** The modules that call it (under packages/core/src). */
  modules: readonly string[];
  /**
   * Which setting needs it; absent when every configuration does. The simulated chain
   * (`simulation/simulated-chain.ts`) answers exactly the methods with no `needs`.
   */
  needs?: string;
}

/**
 * The chain the engine needs: every JSON-RPC method it calls, whether through one of the typed
 * functions in `chain/` or a viem action. docs/architecture.md lists the same table, and the
 * simulated chain's method table is checked against it at type level.
 */
export const chainMethods = {
  eth_chainId: {
    purpose: "the chain id, for userOpHash and signing",
    modules: ["engine/create-bundler.ts", "gas/l1-data-cost.ts", "validation/simulate.ts"],
  },
  eth_blockNumber: {
    purpose: "the head, for receipt look-ups, fee history and reputation decay",
    modules: ["receipt/lookup.ts", "gas/get-fee-history.ts", "reputation/evict-throttled.ts"],
  },
  eth_getBlockByNumber: {
    purpose: "new heads, the base fee, the block a trace re-executes in",
    modules: [
      "chain/polling-block-source.ts",
      "gas/fee-oracle.ts",
      "gas/get-fee-history.ts",
      "validation/tracers/prestate.ts",
    ],
  },
  eth_maxPriorityFeePerGas: {
    purpose: "the tip the fee oracle starts from",
    modules: ["gas/fee-oracle.ts"],
  },
  eth_call: {
    purpose:
      "EntryPoint simulations, deposits and stakes, relayer balances (Multicall3), L1 data fees",
    modules: [
      "validation/eth-call.ts",
      "engine/admission.ts",
      "reputation/stake.ts",
      "submit/lease-funded-relayer.ts",
      "gas/l1-data-cost.ts",
    ],
  },
  eth_estimateGas: {
    purpose: "the gas of a bundle's handleOps, which also finds the operation that fails it",
    modules: ["validation/eth-call.ts", "bundle/build-bundle.ts"],
  },
  eth_getTransactionCount: {
    purpose: "relayer nonces, EIP-7702 authority nonces",
    modules: [
      "submit/send-bundle.ts",
      "submit/transaction-tracker.ts",
      "engine/bundle-puller.ts",
      "validation/check-authorization.ts",
    ],
  },
  eth_getBalance: {
    purpose: "relayer balances where Multicall3 is not deployed, a sender's balance for estimation",
    modules: ["submit/lease-funded-relayer.ts", "gas/estimate-user-operation-gas.ts"],
  },
  eth_sendRawTransaction: {
    purpose: "send a bundle (the classic submitter)",
    modules: ["submit/classic-submitter.ts"],
  },
  eth_getTransactionReceipt: {
    purpose: "whether a bundle is mined, and the receipt of an operation",
    modules: [
      "chain/get-transaction-receipt.ts",
      "submit/transaction-tracker.ts",
      "receipt/lookup.ts",
    ],
  },
  eth_getTransactionByHash: {
    purpose: "whether the node still holds a sent bundle; a bundle's calldata",
    modules: [
      "chain/transaction-in-node.ts",
      "submit/reconcile-submitted.ts",
      "receipt/lookup.ts",
      "gas/get-fee-history.ts",
    ],
  },
  eth_getLogs: {
    purpose: "UserOperationEvent logs, for receipts and fee history, and a committed bundle's operations in any transaction",
    modules: ["chain/get-logs.ts", "receipt/lookup.ts", "gas/get-fee-history.ts", "submit/transaction-tracker.ts"],
  },
  eth_getCode: {
    purpose: "code for gas-limit search, EIP-7702 delegations",
    modules: ["gas/search-gas-limits.ts", "validation/rules/delegation-rules.ts"],
    needs: "estimation, EIP-7702 operations",
  },
  eth_createAccessList: {
    purpose: "a bundle's EIP-2930 access list",
    modules: ["chain/create-access-list.ts", "bundle/build-bundle.ts"],
    needs: "eip2930",
  },
  debug_traceCall: {
    purpose: "validation traces (prestate, JavaScript tracer), a queued account's deployment",
    modules: [
      "chain/debug-trace-call.ts",
      "validation/tracers/prestate.ts",
      "validation/tracers/js/js-tracer.ts",
      "validation/deployment-override.ts",
    ],
    needs:
      "safe validation; operations queued behind a deployment (without it they are simulated without its state)",
  },
  eth_getProof: {
    purpose: "senders' storage roots, the conditions of a conditional send",
    modules: ["submit/conditional-submitter.ts"],
    needs: 'relayingMode "conditional"',
  },
  eth_sendRawTransactionConditional: {
    purpose: "send a bundle that the node drops once a sender's state changes",
    modules: ["chain/send-raw-transaction-conditional.ts", "submit/conditional-submitter.ts"],
    needs: 'relayingMode "conditional"',
  },
} as const satisfies Record<string, ChainMethod>;

export type ChainMethodName = keyof typeof chainMethods;

/** The methods every configuration needs: what the simulated chain answers. */
export type CoreChainMethodName = {
  [M in ChainMethodName]: (typeof chainMethods)[M] extends { needs: string } ? never : M;
}[ChainMethodName];
