import {
  type Bundler,
  createBundler,
  l1DataCosts,
  createRedirectMethods,
  defaultBundlerConfig,
  debugMethods,
  defineEntryPoint,
  mempoolPolicies,
  type Logger,
  type MempoolPolicy,
  silentLogger,
} from "@bundlekit/core";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { createJsonRpcMetrics, type JsonRpcMetrics, type JsonRpcServer, startJsonRpcServer } from "@bundlekit/transport-jsonrpc";
import { type Address, createPublicClient, http, type PublicClient, webSocket } from "viem";
import { ConfigError, redactUrl, type ServerConfig } from "./config.ts";
import { createPaymasterMethods, type PaymasterEndpointConfig } from "./paymaster-endpoint.ts";
import { openStores } from "./stores.ts";

/** A running stand-alone bundler service. */
export interface BundlerService {
  /** The JSON-RPC endpoint, `http://host:port/v1/<chainId>/`. */
  url: string;
  /** The same endpoint over WebSocket (with `eth_subscribe`), `ws://host:port/v1/<chainId>/`. */
  webSocketUrl: string;
  chainId: number;
  bundler: Bundler;
  /** Stop bundling, wait for bundles in flight, close the HTTP server and the store. */
  close(): Promise<void>;
}

/**
 * Wire the engine for one chain: viem client → mempool and reputation (SQLite or PostgreSQL,
 * `config.database`) → local relayer keys → engine →
 * JSON-RPC over HTTP and WebSocket at `/v1/<chainId>/`, `GET /health` and `GET /metrics` on the
 * same port. Checks that every EntryPoint has code before serving. `options.policy` replaces the
 * policy `config.mempoolPolicy` names (an operator's own); `options.paymaster` (else
 * `config.paymasterEndpoint`) serves an ERC-7677 paymaster endpoint (`pm_*`) on the same URL.
 */
export async function startBundlerService(
  config: ServerConfig & { rpcUrl: string },
  logger: Logger = silentLogger,
  options: { policy?: MempoolPolicy | undefined; paymaster?: PaymasterEndpointConfig | undefined } = {},
): Promise<BundlerService> {
  const transport = config.rpcUrl.startsWith("ws") ? webSocket(config.rpcUrl) : http(config.rpcUrl);
  const client = createPublicClient({ transport, pollingInterval: 250 });
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch {
    throw new ConfigError(`cannot reach the node at ${redactUrl(config.rpcUrl)}`);
  }
  for (const { address } of config.entryPoints) {
    const code = await client.getCode({ address });
    if (!code || code === "0x") throw new ConfigError(`EntryPoint ${address} has no code on chain ${chainId}`);
  }
  const paymaster = options.paymaster ?? config.paymasterEndpoint;
  const signer = createLocalKeySigner(config.relayerKeys);
  const stores = await openStores(config.database, logger);
  const { store, reputation } = stores;
  let server: JsonRpcServer | undefined;
  let metrics: JsonRpcMetrics | undefined;
  try {
    const bundler = await createBundler({
      client,
      store,
      reputation,
      signer,
      entryPoints: config.entryPoints.map(({ version, address }) => defineEntryPoint(version, address)),
      config: withOwnPaymastersWhitelisted(config.bundler, paymaster),
      logger,
      instanceId: config.instanceId,
      policy: options.policy ?? mempoolPolicies[config.mempoolPolicy](),
      l1DataCost: config.l1DataCost === "none" ? undefined : l1DataCosts[config.l1DataCost](client),
    });
    if (config.l1DataCost !== "none") logger.info("preVerificationGas covers the L1 data fee", { model: config.l1DataCost });
    // Off by default: when off, a debug method answers -32601 like any unknown method.
    const serveDebugMethods = config.debugMethods || bundler.config.testingMode;
    if (serveDebugMethods) logger.warn("debug_bundler_* methods are enabled: anyone can clear the mempool; use on test networks only");
    metrics = config.metrics ? createJsonRpcMetrics({ bundler, client, store, processMetrics: true }) : undefined;
    server = await startJsonRpcServer({
      bundler,
      // With redirectRpc the node's standard methods are answered by the node itself.
      rpc: {
        maxBatchSize: config.maxBatchSize,
        logger,
        methods: {
          ...(bundler.config.redirectRpc ? createRedirectMethods(client) : {}),
          ...(serveDebugMethods ? debugMethods : {}),
          ...(paymaster ? createPaymasterMethods(client as PublicClient, paymaster) : {}),
        },
      },
      basePath: `/v1/${chainId}`,
      maxBodyBytes: config.maxBodyBytes,
      maxSubscriptions: config.maxSubscriptions,
      metrics,
      port: config.port,
      host: config.host,
    });
    bundler.start();
    const running = server;
    return {
      url: running.url,
      webSocketUrl: running.webSocketUrl,
      chainId,
      bundler,
      async close() {
        await running.close();
        metrics?.close();
        await bundler.stop();
        await stores.close();
      },
    };
  } catch (error) {
    metrics?.close();
    await server?.close();
    await stores.close();
    throw error;
  }
}

/**
 * The paymasters the service's own ERC-7677 endpoint signs for are the operator's: they are
 * whitelisted (exempt from the stake rules of safe mode). The EntryPoint samples' v0.6 verifying
 * paymaster keeps a nonce per sender in its own storage, which ERC-7562 allows an unstaked
 * paymaster only for accounts already deployed.
 */
function withOwnPaymastersWhitelisted(
  bundler: ServerConfig["bundler"],
  paymaster: PaymasterEndpointConfig | undefined,
): ServerConfig["bundler"] {
  const own = Object.values(paymaster?.paymasters ?? {}).filter((a): a is Address => a !== undefined);
  if (own.length === 0) return bundler;
  const listed = bundler.whitelistedEntities ?? defaultBundlerConfig.whitelistedEntities;
  return { ...bundler, whitelistedEntities: { ...listed, paymaster: [...listed.paymaster, ...own] } };
}
