// A TypeScript consumer of the published packages, type-checked (never run) by
// `pnpm check:consumer` with the strictest settings teams use: strict, exactOptionalPropertyTypes,
// moduleResolution nodenext, and skipLibCheck off, so every shipped declaration is checked too.
import {
  type Bundler,
  type BundlerConfig,
  createBundler,
  type UserOperationReceipt,
} from "@bundlekit/core";
import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { createPostgresMempoolStore, createSqliteMempoolStore } from "@bundlekit/storage-kysely";
import { createJsonRpcFetchHandler, startJsonRpcServer } from "@bundlekit/transport-jsonrpc";
import { type Address, createPublicClient, type Hash, http } from "viem";

const config: Partial<BundlerConfig> = { bundleInterval: 500 };

export async function embed(devnet: Devnet, database: string | undefined): Promise<Bundler> {
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
  const store =
    database === undefined
      ? await createSqliteMempoolStore({ filename: ":memory:" })
      : await createPostgresMempoolStore({ connectionString: database });
  return createBundler({ client, store, signer: createLocalKeySigner(devnet.relayerKeys), config });
}

export async function serve(
  bundler: Bundler,
): Promise<{ fetch: (request: Request) => Promise<Response>; url: string }> {
  const server = await startJsonRpcServer({ bundler, port: 0 });
  return { fetch: createJsonRpcFetchHandler({ bundler, basePath: "/bundler" }), url: server.url };
}

/** The receipt in domain form: amounts as bigints, addresses and hashes typed. */
export async function gasPaid(
  bundler: Bundler,
  hash: Hash,
): Promise<{ sender: Address; gas: bigint } | undefined> {
  const receipt: UserOperationReceipt | undefined = await bundler.getUserOperationReceipt(hash);
  if (!receipt) return undefined;
  return { sender: receipt.sender, gas: receipt.actualGasUsed + receipt.receipt.gasUsed };
}

export const devnet: Promise<Devnet> = startDevnet({ relayerCount: 1 });
