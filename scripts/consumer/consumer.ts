// A TypeScript consumer of the published packages, type-checked (never run) by
// `pnpm check:consumer` with the strictest settings teams use: strict, exactOptionalPropertyTypes,
// moduleResolution nodenext, and skipLibCheck off, so every shipped declaration is checked too.
import {
  type Bundler,
  type BundlerSettingsInput,
  createBundler,
  createMemoryReputationStore,
  type NewMempoolEntry,
  type UserOperationReceipt,
} from "@bundlekit/core";
import { type Devnet, startDevnet } from "@bundlekit/devnet";
import {
  type BundlekitError,
  Chain,
  Bundler as EffectBundler,
  Relayers,
} from "@bundlekit/effect";
import {
  createConsoleLogger,
  loadConfig,
  type ServerConfig,
  type BundlerService as StandaloneService,
  startBundlerService,
} from "@bundlekit/server";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { createPostgresMempoolStore, createSqliteMempoolStore } from "@bundlekit/storage-kysely";
import { type StoreOpenFailed, sqliteStores } from "@bundlekit/storage-kysely/effect";
import { fixtureEntry, mempoolStoreContract, reputationStoreContract } from "@bundlekit/testing";
import { createJsonRpcFetchHandler, startJsonRpcServer } from "@bundlekit/transport-jsonrpc";
import { Effect, Layer } from "effect";
import { type Address, createPublicClient, type Hash, http } from "viem";

const settings: BundlerSettingsInput = { bundling: { intervalMs: 500 } };

export async function embed(devnet: Devnet, database: string | undefined): Promise<Bundler> {
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
  const store =
    database === undefined
      ? await createSqliteMempoolStore({ filename: ":memory:" })
      : await createPostgresMempoolStore({ connectionString: database });
  return createBundler({ client, store, signer: createLocalKeySigner(devnet.relayerKeys), settings });
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

/**
 * The engine as an Effect service: a receipt through the `Bundler` service, its layer built from
 * the ports, the stores from the storage package's Effect entry (a typed failure to open them).
 */
export function receiptProgram(
  devnet: Devnet,
  hash: Hash,
): Effect.Effect<UserOperationReceipt | undefined, BundlekitError | StoreOpenFailed> {
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
  const ports = Layer.mergeAll(
    Layer.succeed(Chain, client),
    Layer.succeed(Relayers, createLocalKeySigner(devnet.relayerKeys)),
    sqliteStores(":memory:"),
  );
  return Effect.gen(function* () {
    const bundler = yield* EffectBundler;
    return yield* bundler.getUserOperationReceipt(hash);
  }).pipe(Effect.provide(EffectBundler.layer(settings).pipe(Layer.provide(ports))), Effect.scoped);
}

/** An adapter's own test file: the contract suites from the test kit, run against the SQLite store. */
export function adapterContracts(): void {
  mempoolStoreContract("sqlite", async () => ({
    store: await createSqliteMempoolStore({ filename: ":memory:" }),
  }));
  reputationStoreContract("memory", async () => ({ store: createMemoryReputationStore() }));
}

/** A fixture entry, as the test kit makes them for a policy's own tests. */
export const entry: Promise<NewMempoolEntry> = fixtureEntry({ nonce: 1n });

/** The stand-alone service started from code on the devnet, with the settings the command reads. */
export async function standalone(devnet: Devnet): Promise<StandaloneService> {
  const settings: ServerConfig = loadConfig({ BUNDLEKIT_PORT: "0" }, []);
  return startBundlerService(
    { ...settings, rpcUrl: devnet.rpcUrl, relayerKeys: devnet.relayerKeys },
    createConsoleLogger("warn"),
  );
}
