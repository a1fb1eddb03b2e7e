import { type Address, createPublicClient, type Hex, http, numberToHex } from "viem";
import gasPriceOracle from "./artifacts/GasPriceOracleStandIn.json" with { type: "json" };
import nodeInterface from "./artifacts/NodeInterfaceStandIn.json" with { type: "json" };
import type { Devnet } from "./devnet.ts";

/** The L2 fee models whose L1 data-fee interface the devnet can stand in for. */
export type L1FeeModel = "op-stack" | "arbitrum";

const standIns = {
  "op-stack": { address: "0x420000000000000000000000000000000000000F", code: gasPriceOracle.deployedBytecode },
  arbitrum: { address: "0x00000000000000000000000000000000000000C8", code: nodeInterface.deployedBytecode },
} as const satisfies Record<L1FeeModel, { address: Address; code: string }>;

/**
 * Make the devnet answer like an L2 node for its L1 data fee: a stand-in contract
 * (contracts/testing/L1FeeStandIns.sol) at the predeploy address, charging `perByte` for each
 * byte of calldata: wei for OP stack's `GasPriceOracle.getL1Fee`, L2 gas for Arbitrum's
 * `NodeInterface.gasEstimateL1Component`. Returns the address.
 */
export async function placeL1FeeStandIn(devnet: Pick<Devnet, "rpcUrl" | "chain">, model: L1FeeModel, perByte: bigint): Promise<Address> {
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
  const { address, code } = standIns[model];
  await client.request<{ Parameters: [address: Address, code: Hex]; ReturnType: null }>({ method: "anvil_setCode", params: [address, code as Hex] });
  // The price per byte is the stand-in's first storage slot.
  await client.request<{ Parameters: [address: Address, slot: Hex, value: Hex]; ReturnType: boolean }>({
    method: "anvil_setStorageAt",
    params: [address, numberToHex(0, { size: 32 }), numberToHex(perByte, { size: 32 })],
  });
  return address;
}
