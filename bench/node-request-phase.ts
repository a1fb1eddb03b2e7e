/**
 * Which phase of an operation's life a node request of the service belongs to, told from the
 * request alone (the proxy cannot see which of the service's tasks sent it). In safe mode:
 * - estimate: the gas search's calls (`GasLimitSearch`), the untraced `simulateValidation` that
 *   checks the estimate on the sender's balance, and the sender's balance;
 * - send: the traced validations (`debug_traceCall`: the prestate, and a queued first
 *   operation's deployment);
 * - bundle: estimating, sending and following bundles (`handleOps`, code hashes, the relayers'
 *   balances and nonces, receipts);
 * - receipt: what only receipt and operation lookups ask (`eth_getUserOperationReceipt`,
 *   `eth_getUserOperationByHash`): the latest block number, a block by its number (is a kept
 *   receipt's block still canonical) and log scans. Their reads of a bundle's transaction receipt
 *   look like the tracker's and count in bundle;
 * - shared: fee suggestions, blocks and the chain id, which estimation and bundling both read.
 */
import { type Abi, type Address, toFunctionSelector } from "viem";
import gasLimitSearch from "../packages/core/src/gas/artifacts/GasLimitSearch.json" with {
  type: "json",
};

/** What one JSON-RPC request to the node was for. */
export type NodeRequestPhase = "estimate" | "send" | "bundle" | "receipt" | "shared" | "other";

const estimateSelectors = new Set<string>([
  ...(gasLimitSearch.abi as Abi).flatMap((item) =>
    item.type === "function" ? [toFunctionSelector(item)] : [],
  ),
  // simulateValidation of v0.6, then of v0.7+ (`EntryPointSimulations`).
  toFunctionSelector(
    "simulateValidation((address,uint256,bytes,bytes,uint256,uint256,uint256,uint256,uint256,bytes,bytes))",
  ),
  toFunctionSelector(
    "simulateValidation((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes))",
  ),
]);

const bundleMethods = new Set([
  "eth_estimateGas",
  "eth_sendRawTransaction",
  "eth_sendRawTransactionConditional",
  "eth_getTransactionReceipt",
  "eth_getTransactionByHash",
  "eth_getTransactionCount",
  "eth_createAccessList",
]);
const receiptMethods = new Set(["eth_blockNumber", "eth_getLogs"]);
const sharedMethods = new Set([
  "eth_getBlockByNumber",
  "eth_chainId",
  "eth_maxPriorityFeePerGas",
  "eth_gasPrice",
  "eth_feeHistory",
]);

/** The phase of one request (see the module's comment), given the service's relayers. */
export function nodeRequestPhase(relayers: readonly Address[]) {
  const relayerSet = new Set(relayers.map((relayer) => relayer.toLowerCase()));
  return (request: { method?: string; params?: unknown[] }): NodeRequestPhase => {
    const method = request.method ?? "";
    if (method === "debug_traceCall") return "send";
    if (method === "eth_getBalance" || method === "eth_getCode") {
      const address = String(request.params?.[0] ?? "").toLowerCase();
      return relayerSet.has(address) ? "bundle" : "estimate";
    }
    if (method === "eth_call") {
      const call = request.params?.[0] as { data?: string; input?: string } | undefined;
      const selector = (call?.data ?? call?.input ?? "").slice(0, 10);
      return estimateSelectors.has(selector) ? "estimate" : "bundle";
    }
    if (bundleMethods.has(method)) return "bundle";
    if (receiptMethods.has(method)) return "receipt";
    // The latest block is everyone's; a block by number is a lookup's.
    if (method === "eth_getBlockByNumber" && /^0x[0-9a-f]+$/i.test(String(request.params?.[0])))
      return "receipt";
    if (sharedMethods.has(method)) return "shared";
    return "other";
  };
}
