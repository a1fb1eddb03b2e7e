import {
  type Address,
  concat,
  createPublicClient,
  createWalletClient,
  getContractAddress,
  type Hex,
  http,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { CREATE2_DEPLOYER, ZERO_SALT } from "./addresses.ts";
import v06 from "./artifacts/Simple7702AccountV06.json" with { type: "json" };
import v07 from "./artifacts/Simple7702AccountV07.json" with { type: "json" };
import type { Devnet } from "./devnet.ts";

const bytecodes = { "0.6": v06.bytecode as Hex, "0.7": v07.bytecode as Hex } as const;

/**
 * Where `deploySimple7702Accounts` puts the EIP-7702 accounts of EntryPoint v0.6 and v0.7
 * (contracts/testing/Simple7702Accounts.sol; CREATE2, salt 0): the delegates of EOAs that send
 * operations to those EntryPoints with `eip7702Auth`. They validate the userOpHash signed by the
 * EOA as a personal message and take SimpleAccount's `execute` and `executeBatch` of their
 * version, so permissionless's `toSimpleSmartAccount({ eip7702: true, accountLogicAddress })`
 * drives them. v0.8's is `SIMPLE_7702_ACCOUNT`, deployed with the devnet.
 */
export const SIMPLE_7702_ACCOUNTS_BEFORE_V08: Readonly<Record<"0.6" | "0.7", Address>> = {
  "0.6": getContractAddress({
    opcode: "CREATE2",
    from: CREATE2_DEPLOYER,
    salt: ZERO_SALT,
    bytecode: bytecodes["0.6"],
  }),
  "0.7": getContractAddress({
    opcode: "CREATE2",
    from: CREATE2_DEPLOYER,
    salt: ZERO_SALT,
    bytecode: bytecodes["0.7"],
  }),
};

/** Deploy the EIP-7702 accounts of EntryPoint v0.6 and v0.7 on the devnet (once; later calls find them) and return their addresses. */
export async function deploySimple7702Accounts(
  devnet: Pick<Devnet, "rpcUrl" | "chain" | "accountKeys">,
): Promise<Readonly<Record<"0.6" | "0.7", Address>>> {
  const transport = http(devnet.rpcUrl);
  const client = createPublicClient({ chain: devnet.chain, transport, pollingInterval: 20 });
  const wallet = createWalletClient({
    chain: devnet.chain,
    transport,
    account: privateKeyToAccount(devnet.accountKeys.at(-2)!),
  });
  for (const version of ["0.6", "0.7"] as const) {
    if (await client.getCode({ address: SIMPLE_7702_ACCOUNTS_BEFORE_V08[version] })) continue;
    const hash = await wallet.sendTransaction({
      to: CREATE2_DEPLOYER,
      data: concat([ZERO_SALT, bytecodes[version]]),
    });
    await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  }
  return SIMPLE_7702_ACCOUNTS_BEFORE_V08;
}
