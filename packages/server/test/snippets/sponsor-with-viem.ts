import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, type Chain, createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient, type EntryPointVersion } from "viem/account-abstraction";

/** One call from a new SimpleAccount that holds no ETH: the bundler's ERC-7677 endpoint sponsors it. */
export async function sponsorWithViem(options: {
  bundlerUrl: string; // `bundler:` from `pnpm start`
  // `paymaster:` from `pnpm start`, with `?apikey=<key>` where the policy has API keys
  paymasterUrl: string;
  nodeUrl: string; // `node:` from `pnpm start`
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
  const bundler = createBundlerClient({
    account,
    client,
    transport: http(options.bundlerUrl),
    // The bundler's URL serves pm_getPaymasterStubData and pm_getPaymasterData too.
    paymaster: createPaymasterClient({ transport: http(options.paymasterUrl) }),
  });
  const hash = await bundler.sendUserOperation({ calls: [{ to: options.to, value: 0n }] });
  return bundler.waitForUserOperationReceipt({ hash });
}
