import { createSmartAccountClient } from "permissionless";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, type Chain, createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createPaymasterClient, type EntryPointVersion } from "viem/account-abstraction";

/** The same with permissionless's smart account client: it estimates, sponsors, signs and sends. */
export async function sponsorWithPermissionless(options: {
  bundlerUrl: string;
  paymasterUrl: string;
  nodeUrl: string;
  chain: Chain;
  entryPoint: { address: Address; version: EntryPointVersion };
  to: Address;
}) {
  const client = createPublicClient({ chain: options.chain, transport: http(options.nodeUrl) });
  const account = await toSimpleSmartAccount({
    client,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: options.entryPoint,
  });
  const smartAccount = createSmartAccountClient({
    account,
    client, // fees come from the node
    chain: options.chain,
    bundlerTransport: http(options.bundlerUrl),
    paymaster: createPaymasterClient({ transport: http(options.paymasterUrl) }),
  });
  // A transaction hash: the bundle's, once the operation is included.
  return smartAccount.sendTransaction({ to: options.to, value: 0n });
}
