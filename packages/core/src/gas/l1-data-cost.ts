import { type Address, encodeFunctionData, type Hex, parseAbi, serializeTransaction } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { toEntryPointStruct } from "../userop/pack.ts";
import type { UserOperation } from "../userop/types.ts";
import type { GasPrice } from "./fee-oracle.ts";

/**
 * The fee an L2 charges a transaction for posting its data to L1, on top of its L2 gas. The
 * EntryPoint pays the bundler for gas only, so an operation on such a chain must carry this fee
 * in its `preVerificationGas`. One implementation per fee model; chosen by configuration
 * (`l1DataCost`), as no node says which model it follows.
 */
export interface L1DataCost {
  /** The fee model: `op-stack` or `arbitrum`. */
  readonly name: string;
  /** The L1 data fee, in wei, of a bundle transaction carrying `op` alone. */
  l1Fee(op: UserOperation, entryPoint: EntryPoint): Promise<bigint>;
}

/** OP-stack chains' `GasPriceOracle` predeploy. */
export const OP_STACK_GAS_PRICE_ORACLE: Address = "0x420000000000000000000000000000000000000F";
/** Arbitrum's `NodeInterface`: not a contract, answered by the node in `eth_call`. */
export const ARBITRUM_NODE_INTERFACE: Address = "0x00000000000000000000000000000000000000C8";

const gasPriceOracleAbi = parseAbi(["function getL1Fee(bytes data) view returns (uint256)"]);
const nodeInterfaceAbi = parseAbi([
  "function gasEstimateL1Component(address to, bool contractCreation, bytes data) payable returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)",
]);

/** `handleOps([op], beneficiary)` as a bundle transaction would carry it. */
function handleOpsCalldata(op: UserOperation, entryPoint: EntryPoint): Hex {
  const beneficiary: Address = "0xffffffffffffffffffffffffffffffffffffffff";
  return encodeFunctionData({ abi: entryPoint.abi, functionName: "handleOps", args: [[toEntryPointStruct(op)], beneficiary] });
}

/**
 * OP stack (Bedrock and later): `GasPriceOracle.getL1Fee` of the signed bundle transaction. Its
 * fields other than the calldata are stand-ins of the largest size they take, so the fee is not
 * underestimated.
 */
export function createOpStackL1DataCost(client: ChainClient): L1DataCost {
  let chainId: Promise<number> | undefined;
  return {
    name: "op-stack",
    async l1Fee(op, entryPoint) {
      chainId ??= client.getChainId();
      const max = 2n ** 64n - 1n;
      const transaction = serializeTransaction(
        { chainId: await chainId, type: "eip1559", to: entryPoint.address, data: handleOpsCalldata(op, entryPoint), nonce: Number(2n ** 32n - 1n), gas: max, maxFeePerGas: max, maxPriorityFeePerGas: max },
        { r: `0x${"ff".repeat(32)}`, s: `0x${"7f".repeat(32)}`, yParity: 1 },
      );
      return client.readContract({ address: OP_STACK_GAS_PRICE_ORACLE, abi: gasPriceOracleAbi, functionName: "getL1Fee", args: [transaction] });
    },
  };
}

/** Arbitrum (Nitro): `NodeInterface.gasEstimateL1Component` of the bundle call, in L2 gas at the L2 base fee. */
export function createArbitrumL1DataCost(client: ChainClient): L1DataCost {
  return {
    name: "arbitrum",
    async l1Fee(op, entryPoint) {
      const { result } = await client.simulateContract({
        address: ARBITRUM_NODE_INTERFACE,
        abi: nodeInterfaceAbi,
        functionName: "gasEstimateL1Component",
        args: [entryPoint.address, false, handleOpsCalldata(op, entryPoint)],
      });
      const [gasForL1, baseFee] = result;
      return gasForL1 * baseFee;
    },
  };
}

/**
 * The gas that covers the operation's L1 data fee at what it pays per gas: today's base fee plus
 * its tip, capped by its max fee (the suggestion's fees where it has none yet, as in an estimate).
 */
export async function l1DataGas(cost: L1DataCost, op: UserOperation, entryPoint: EntryPoint, suggested: GasPrice): Promise<bigint> {
  const fee = await cost.l1Fee(op, entryPoint);
  if (fee === 0n) return 0n;
  const maxFee = op.maxFeePerGas > 0n ? op.maxFeePerGas : suggested.maxFeePerGas;
  const tip = op.maxPriorityFeePerGas > 0n ? op.maxPriorityFeePerGas : suggested.maxPriorityFeePerGas;
  const price = min(maxFee, suggested.baseFeePerGas + tip);
  if (price === 0n) return 0n;
  return (fee + price - 1n) / price;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** The L1 data-fee models shipped, by the name that chooses one (`BUNDLEKIT_L1_DATA_COST` in the stand-alone service). */
export const l1DataCosts = { "op-stack": createOpStackL1DataCost, arbitrum: createArbitrumL1DataCost } as const satisfies Record<
  string,
  (client: ChainClient) => L1DataCost
>;

export type L1DataCostName = keyof typeof l1DataCosts;
