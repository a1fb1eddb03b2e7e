import { type Abi, type Address, concat, createPublicClient, createWalletClient, getContractAddress, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import gasWorkloads from "./artifacts/GasWorkloads.json" with { type: "json" };
import { CREATE2_DEPLOYER, ZERO_SALT } from "./addresses.ts";
import type { Devnet } from "./devnet.ts";

/**
 * ABI of `GasWorkloads` (contracts/testing): callees whose gas needs tests and benchmarks know —
 * `requireGas(uint256)` (fails unless that much gas reached it), `loop(uint256)`,
 * `consume(bytes)`, and `fail(string)`, `divide(uint256,uint256)`, `refuse(uint256)` that revert
 * with `Error(string)`, a panic and a custom error.
 */
export const gasWorkloadsAbi = gasWorkloads.abi as Abi;

/** Where `deployGasWorkloads` puts the contract (CREATE2, salt 0). */
export const GAS_WORKLOADS: Address = getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: ZERO_SALT, bytecode: gasWorkloads.bytecode as Hex });

/** Deploy `GasWorkloads` on the devnet (once; later calls find it) and return its address. */
export async function deployGasWorkloads(devnet: Pick<Devnet, "rpcUrl" | "chain" | "accountKeys">): Promise<Address> {
  const transport = http(devnet.rpcUrl);
  const client = createPublicClient({ chain: devnet.chain, transport, pollingInterval: 20 });
  if (await client.getCode({ address: GAS_WORKLOADS })) return GAS_WORKLOADS;
  const wallet = createWalletClient({ chain: devnet.chain, transport, account: privateKeyToAccount(devnet.accountKeys.at(-2)!) });
  const hash = await wallet.sendTransaction({ to: CREATE2_DEPLOYER, data: concat([ZERO_SALT, gasWorkloads.bytecode as Hex]) });
  await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  return GAS_WORKLOADS;
}
