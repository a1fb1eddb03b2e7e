import {
  type ChainClient,
  createConfiguredSubmitter,
  createRedirectMethods,
  createRequestDrain,
  debugMethods,
  bundlerConfigMethod,
  defaultBundlerSettings,
  defineEntryPoint,
  type Logger,
  l1DataCosts,
  type MempoolPolicy,
  mempoolPolicies,
  resolveBundlerSettings,
  type Redactor,
  type RelayerSigner,
  redactingLogger,
  silentLogger,
} from "@bundlekit/core";
import {
  Chain,
  Bundler,
  type BundlerShape,
  EngineLogger,
  PoolPolicy,
  MempoolStorage,
  PreconfirmationStorage,
  Relayers,
  ReputationStorage,
  BundleSubmitter,
} from "@bundlekit/effect";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { createJsonRpcMetrics, startJsonRpcServer, startMetricsServer } from "@bundlekit/transport-jsonrpc";
import { Cause, Context, Effect, Exit, Layer, Scope } from "effect";
import { type Address, createPublicClient, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { startBuilderServer } from "./builder-api/builder-server.ts";
import { ConfigError, redactUrl, type ServerConfig } from "./config.ts";
import { type NodeTimeouts, nodeTransport } from "./node-transport.ts";
import { createPaymasterMethods, type PaymasterEndpointConfig } from "./paymaster-endpoint.ts";
import { serviceRedactor } from "./service-redactor.ts";
import { createConfiguredSponsorshipPolicy } from "./sponsorship/configured-policy.ts";
import { gracefulClose, requestGraceMs } from "./shutdown.ts";
import { openStores } from "./stores.ts";

/** A running stand-alone bundler service. */
export interface BundlerService {
  /** The JSON-RPC endpoint, `http://host:port/v1/<chainId>/`. */
  url: string;
  /** The same endpoint over WebSocket (with `eth_subscribe`), `ws://host:port/v1/<chainId>/`. */
  webSocketUrl: string;
  /** The builder API (`builder_*` methods, JWT-authenticated), `http://host:port/`; undefined when off (`config.builder`). */
  builderUrl: string | undefined;
  /** The Prometheus scrape, `http://host:port/metrics` (on its own port with `metricsPort`); undefined with metrics off. */
  metricsUrl: string | undefined;
  chainId: number;
  /** The engine (core's `Bundler`). */
  bundler: BundlerShape["engine"];
  /**
   * Stop accepting, give requests in flight until the grace period (`shutdownGraceMs`) nearly
   * ends and answer those still running with an error, close the connections, stop bundling
   * (waiting for bundles in flight) and close the store.
   */
  close(): Promise<void>;
}

/**
 * The service for one chain, composed from the `@bundlekit/effect` layers: viem client, mempool
 * and reputation (SQLite or PostgreSQL, `config.database`), local relayer keys and policy as port
 * services → `BundlerService` → JSON-RPC over HTTP and WebSocket at `/v1/<chainId>/`,
 * `GET /health` (503 while the database cannot write) and `GET /metrics` on the same port (metrics on their own with `metricsPort`).
 * Every node client has the configured timeouts (`nodeTimeoutMs`, `nodeRetryCount`). Checks that every EntryPoint has code
 * before serving. `options.policy` replaces the policy `config.mempoolPolicy` names (an
 * operator's own); `options.paymaster` (else `config.paymasterEndpoint` under
 * `config.sponsorshipPolicy`) serves an ERC-7677 paymaster endpoint (`pm_*`) on the same URL,
 * signing only what its sponsorship policy allows. Every log line (through `logger`), error
 * answer and error thrown passes through `serviceRedactor`: no node URL's key, relayer key or
 * password leaves the service.
 */
export async function startBundlerService(
  config: ServerConfig & { rpcUrl: string },
  logger: Logger = silentLogger,
  options: { policy?: MempoolPolicy | undefined; paymaster?: PaymasterEndpointConfig | undefined } = {},
): Promise<BundlerService> {
  const redactor = serviceRedactor(config, [options.paymaster?.signerKey]);
  try {
    return await startRedacted(config, redactingLogger(logger, redactor), redactor, options);
  } catch (error) {
    throw redactor.error(error);
  }
}

async function startRedacted(
  config: ServerConfig & { rpcUrl: string },
  logger: Logger,
  redactor: Redactor,
  options: { policy?: MempoolPolicy | undefined; paymaster?: PaymasterEndpointConfig | undefined },
): Promise<BundlerService> {
  const paymaster = options.paymaster ?? configuredPaymasterEndpoint(config);
  const timeouts: NodeTimeouts = { timeoutMs: config.nodeTimeoutMs, retryCount: config.nodeRetryCount };
  const client = createPublicClient({ transport: nodeTransport(config.rpcUrl, { ...timeouts, batchSize: config.nodeBatchSize }), pollingInterval: 250 });
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
  const ports = Layer.mergeAll(
    Layer.succeed(Chain, client as ChainClient),
    // No keys (pull mode, where the block builder signs): an engine without relayers.
    Layer.succeed(Relayers, config.relayerKeys.length > 0 ? createLocalKeySigner(config.relayerKeys) : noRelayers),
    Layer.succeed(PoolPolicy, options.policy ?? mempoolPolicies[config.mempoolPolicy]({ sameSenderMempoolCount: config.bundler.mempool?.sameSenderCount })),
    Layer.succeed(EngineLogger, logger),
    storesLayer(config.database, config.databasePoolSize, logger),
    submitterLayer(client as ChainClient, config.bundler, timeouts),
  );
  const engine = Bundler.layer(withOwnPaymastersWhitelisted(config.bundler, paymaster), {
    instanceId: config.instanceId,
    entryPoints: config.entryPoints.map(({ version, address }) => defineEntryPoint(version, address)),
    l1DataCost: config.l1DataCost === "none" ? undefined : l1DataCosts[config.l1DataCost](client as ChainClient),
    preconfirmationSigner: config.preconfirmationKey ? privateKeyToAccount(config.preconfirmationKey) : undefined,
  });
  const service = transportLayer({ config, client, chainId, logger, redactor, paymaster }).pipe(Layer.provide(engine), Layer.provideMerge(ports));
  // Built in a scope of its own, closed by `close()`: the server first, then the engine, then the stores.
  const scope = await Effect.runPromise(Scope.make());
  const built = await Effect.runPromiseExit(Layer.buildWithScope(service, scope));
  if (Exit.isFailure(built)) {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    throw Cause.squash(built.cause);
  }
  return { ...Context.get(built.value, RunningService), close: () => Effect.runPromise(Scope.close(scope, Exit.void)) };
}

/** No relayer: the signer of a pull-mode service whose block builder signs. */
const noRelayers: RelayerSigner = { addresses: [], lease: () => undefined };

/**
 * A separate submission endpoint (`relaying.submitUrl`, `rpcEndpointSubmit`) gets the node timeouts too; a send is not
 * retried (as the engine's own submitter does). Without one the engine's default submitter uses the client.
 */
function submitterLayer(client: ChainClient, bundler: ServerConfig["bundler"], timeouts: NodeTimeouts): Layer.Layer<never> | Layer.Layer<BundleSubmitter> {
  const relaying = resolveBundlerSettings(bundler).relaying;
  if (!relaying.submitUrl) return Layer.empty;
  const submitter = createConfiguredSubmitter(client, relaying, (url) => nodeTransport(url, { ...timeouts, retryCount: 0 }));
  return Layer.succeed(BundleSubmitter, submitter);
}

/** The configured paymaster endpoint under the configured policy (quotas on the wall clock); never one without a policy. */
function configuredPaymasterEndpoint(config: ServerConfig): PaymasterEndpointConfig | undefined {
  const { paymasterEndpoint: endpoint, sponsorshipPolicy: settings } = config;
  if (!endpoint) return undefined;
  if (!settings) throw new ConfigError("the paymaster endpoint needs a sponsorship policy (BUNDLEKIT_SPONSORSHIP_POLICY)");
  return { ...endpoint, policy: createConfiguredSponsorshipPolicy(settings), validForSeconds: settings.validForSeconds };
}

/** The running service's addresses and engine, as the transport layer provides them. */
class RunningService extends Context.Service<RunningService, Omit<BundlerService, "close">>()("@bundlekit/standalone/RunningService") {}

/** Whether the service's database can write now (`ServiceStores.checkHealth`), for `GET /health`. */
class StoreHealthService extends Context.Service<StoreHealthService, () => Promise<void>>()("@bundlekit/standalone/StoreHealth") {}

/** The mempool, reputation and preconfirmation stores on the service's database, opened with its own errors (`openStores`) and closed with the scope. */
function storesLayer(database: string, poolSize: number, logger: Logger): Layer.Layer<MempoolStorage | ReputationStorage | PreconfirmationStorage | StoreHealthService, unknown> {
  return Layer.effectContext(
    Effect.acquireRelease(
      Effect.tryPromise({ try: () => openStores(database, logger, { poolSize }), catch: (error) => error }),
      (stores) => Effect.promise(() => stores.close()),
    ).pipe(
      Effect.map((stores) =>
        Context.make(MempoolStorage, stores.store).pipe(
          Context.add(ReputationStorage, stores.reputation),
          Context.add(PreconfirmationStorage, stores.preconfirmations),
          Context.add(StoreHealthService, stores.checkHealth),
        ),
      ),
    ),
  );
}

/** JSON-RPC over HTTP and WebSocket for the engine in context, with its metrics; closed with the scope before the engine stops. */
function transportLayer(parameters: {
  config: ServerConfig;
  client: PublicClient;
  chainId: number;
  logger: Logger;
  redactor: Redactor;
  paymaster: PaymasterEndpointConfig | undefined;
}): Layer.Layer<RunningService, unknown, Bundler | MempoolStorage | StoreHealthService | Relayers> {
  const { config, client, chainId, logger, redactor, paymaster } = parameters;
  return Layer.effect(
    RunningService,
    Effect.gen(function* () {
      const { engine: bundler } = yield* Bundler;
      const store = yield* MempoolStorage;
      const checkHealth = yield* StoreHealthService;
      const signer = yield* Relayers;
      if (config.l1DataCost !== "none") logger.info("preVerificationGas covers the L1 data fee", { model: config.l1DataCost });
      // Off by default: when off, a debug method answers -32601 like any unknown method.
      const serveDebugMethods = config.debugMethods || config.testingMode;
      if (serveDebugMethods) logger.warn("debug_bundler_* methods are enabled: anyone can clear the mempool; use on test networks only");
      const metrics = yield* Effect.acquireRelease(
        Effect.sync(() => (config.metrics ? createJsonRpcMetrics({ bundler, client, store, processMetrics: true }) : undefined)),
        (opened) => Effect.sync(() => opened?.close()),
      );
      // With a metrics port, the scrape is served there and not on the public port.
      const metricsServer =
        metrics && config.metricsPort !== undefined
          ? yield* Effect.acquireRelease(
              Effect.tryPromise({
                try: () => startMetricsServer({
                    registry: metrics.registry,
                    port: config.metricsPort,
                    host: config.metricsHost,
                    allowedHosts: config.transport.allowedHosts,
                  }),
                catch: (error) => error,
              }),
              (opened) => Effect.promise(() => opened.close()),
            )
          : undefined;
      const drain = createRequestDrain();
      const server = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            startJsonRpcServer({
              bundler,
              // With redirectRpc the node's standard methods are answered by the node itself.
              rpc: {
                maxBatchSize: config.maxBatchSize,
                logger,
                drain,
                redactor,
                methods: {
                  ...(config.redirectRpc ? createRedirectMethods(client) : {}),
                  bundler_config: bundlerConfigMethod({ testingMode: config.testingMode, redirectRpc: config.redirectRpc, explorerApiKey: config.explorerApiKey !== undefined }),
                  ...(serveDebugMethods ? debugMethods : {}),
                  ...(paymaster ? createPaymasterMethods(client, paymaster) : {}),
                },
              },
              basePath: `/v1/${chainId}`,
              maxBodyBytes: config.maxBodyBytes,
              maxSubscriptions: config.maxSubscriptions,
              ...config.transport,
              metrics,
              metricsPath: metricsServer ? false : undefined,
              // Not ok (503) while the database cannot write: operations would be refused.
              checkHealth,
              port: config.port,
              host: config.host,
            }).then((running) => ({ running, close: gracefulClose(running, drain) })),
          catch: (error) => error,
        }),
        ({ close }) => Effect.promise(() => close(requestGraceMs(config.shutdownGraceMs))),
      );
      const metricsUrl = metricsServer?.url ?? (metrics ? new URL("/metrics", server.running.url).href : undefined);
      // Off by default; its own listener, every request authenticated by the JWT secret.
      const builder = config.builder;
      const builderServer = builder
        ? yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: () =>
                startBuilderServer({
                  bundler,
                  signer,
                  secret: Buffer.from(builder.jwtSecret.slice(2), "hex"),
                  port: builder.port,
                  host: builder.host,
                  logger,
                  redactor,
                  maxBodyBytes: config.maxBodyBytes,
                  maxBatchSize: config.maxBatchSize,
                }),
              catch: (error) => error,
            }),
            (opened) => Effect.promise(() => opened.close()),
          )
        : undefined;
      return { url: server.running.url, webSocketUrl: server.running.webSocketUrl, builderUrl: builderServer?.url, metricsUrl, chainId, bundler };
    }),
  );
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
  const listed = bundler.reputation?.whitelistedEntities ?? defaultBundlerSettings.reputation.whitelistedEntities;
  return { ...bundler, reputation: { ...bundler.reputation, whitelistedEntities: { ...listed, paymaster: [...listed.paymaster, ...own] } } };
}
