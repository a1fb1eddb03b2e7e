import { type Devnet, type EntryPointVersion, toSimpleAccount } from "@bundlekit/devnet";
import { type Address, createPublicClient, createWalletClient, http, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient } from "viem/account-abstraction";

/** A new SimpleAccount on the devnet, funded by one of the devnet's keys, sends 0.1 ETH to `to` through a bundler. */
export async function sendFromSimpleAccount(devnet: Devnet, bundlerUrl: string, version: EntryPointVersion, to: Address) {
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
  const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version });
  // Counterfactual: its first operation deploys it (the canonical SimpleAccountFactory) and pays from its balance.
  const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys[0]!) });
  await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }) });

  // The devnet mines each transaction at once: poll for the receipt often.
  const bundler = createBundlerClient({ account, client, transport: http(bundlerUrl), pollingInterval: 100 });
  const hash = await bundler.sendUserOperation({ calls: [{ to, value: parseEther("0.1") }] });
  return bundler.waitForUserOperationReceipt({ hash });
}
