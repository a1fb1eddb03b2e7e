import type { Bundler } from "@bundlekit/core";
import {
  DEVNET_PAYMASTER_SIGNER_KEY,
  type Devnet,
  ENTRY_POINT_VERSIONS,
  paymasterLines,
  startDevnet,
} from "@bundlekit/devnet";
import { EngineLogger, effectLogger } from "@bundlekit/effect";
import { NodeRuntime } from "@effect/platform-node";
import { Cause, Effect, Exit, Layer, Logger, References, Schedule } from "effect";
import { ConfigError, redactUrl, type ServerConfig, serverConfig } from "./config.ts";
import { describeDatabase } from "./database-url.ts";
import { describeFailure } from "./start-failure.ts";
import { jsonLinesLogger } from "./logger.ts";
import { serviceRedactor } from "./service-redactor.ts";
import {
  createConfiguredSponsorshipPolicy,
  describeSponsorship,
  devnetSponsorLimits,
  limitsPolicy,
} from "./sponsorship/configured-policy.ts";
import { type BundlerService, startBundlerService } from "./server.ts";
import { exitAfterGracePeriod } from "./shutdown.ts";

/**
 * `pnpm start`: serve the chain at BUNDLEKIT_RPC_URL, or with no RPC URL start the embedded
 * devnet (anvil with the canonical EntryPoints) and serve that. An Effect program: settings
 * through `Config`, log lines through Effect's `Logger`, the devnet and the service resources of
 * its scope. Ctrl-C (SIGINT or SIGTERM) closes the scope: the server stops accepting, requests in
 * flight finish or are answered with an error, bundles in flight finish or go back to the pool,
 * the devnet stops; all within `shutdownGraceMs`, after which the process exits regardless.
 */
const program = Effect.gen(function* () {
  const config = yield* serverConfig(process.argv.slice(2));
  return yield* serve(config).pipe(
    // The engine's lines go through Effect's logging, which writes them with the service's logger,
    // redacted with the configured secrets.
    Effect.provide(Layer.provideMerge(effectLogger, Logger.layer([jsonLinesLogger(serviceRedactor(config))]))),
    Effect.provideService(References.MinimumLogLevel, minimumLogLevel[config.logLevel]),
  );
});

/** The devnet if there is no node, the service on it, the start-up lines; then serve until the scope closes. */
const serve = (config: ServerConfig) =>
  Effect.gen(function* () {
    const logger = yield* EngineLogger;
    const devnet = config.rpcUrl
      ? undefined
      : yield* Effect.acquireRelease(
          Effect.promise(() => startDevnet()),
          (started) => Effect.promise(() => started.stop().catch(() => {})),
        );
    const service = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => start(config, devnet, logger), catch: (error) => error }).pipe(
        // The node may still be starting: try again for about 12 s before giving up.
        Effect.retry({
          schedule: Schedule.exponential("200 millis"),
          times: 6,
          while: unreachableNode,
        }),
      ),
      (started) => Effect.promise(() => started.close().catch(() => {})),
    );
    exitAfterGracePeriod(config.shutdownGraceMs, logger);
    process.stdout.write(`${startupLines(config, service, devnet).join("\n")}\n`);
    return yield* Effect.never;
  });

/** The service on the configured node, or on the devnet, which it then sponsors on through the devnet's verifying paymasters (ERC-7677). */
function start(
  config: ServerConfig,
  devnet: Devnet | undefined,
  logger: EngineLogger["Service"],
): Promise<BundlerService> {
  if (!devnet) return startBundlerService({ ...config, rpcUrl: config.rpcUrl! }, logger);
  return startBundlerService(
    {
      ...config,
      rpcUrl: devnet.rpcUrl,
      relayerKeys: config.relayerKeys.length > 0 ? config.relayerKeys : devnet.relayerKeys,
    },
    logger,
    {
      paymaster: {
        signerKey: DEVNET_PAYMASTER_SIGNER_KEY,
        paymasters: Object.fromEntries(
          ENTRY_POINT_VERSIONS.map((version) => [
            version,
            devnet.deployments[version].paymasters.verifying,
          ]),
        ),
        // The configured policy if there is one; else open to any caller, within the devnet's caps.
        policy: config.sponsorshipPolicy
          ? createConfiguredSponsorshipPolicy(config.sponsorshipPolicy)
          : limitsPolicy(devnetSponsorLimits),
        validForSeconds: config.sponsorshipPolicy?.validForSeconds,
      },
    },
  );
}

const unreachableNode = (error: unknown) =>
  error instanceof ConfigError && error.message.startsWith("cannot reach the node");

function startupLines(
  config: ServerConfig,
  service: BundlerService,
  devnet: Devnet | undefined,
): string[] {
  return [
    `Bundlekit is serving chain ${service.chainId}`,
    `  bundler:     ${service.url}`,
    `  websocket:   ${service.webSocketUrl}`,
    ...(service.metricsUrl ? [`  metrics:     ${service.metricsUrl}`] : []),
    ...(service.builderUrl ? [`  builder API: ${service.builderUrl}  (builder_* methods, JWT-authenticated)`] : []),
    `  node:        ${devnet ? devnet.rpcUrl : redactUrl(config.rpcUrl!)}${devnet ? "  (embedded devnet)" : ""}`,
    `  chain id:    ${service.chainId}`,
    `  database:    ${describeDatabase(config.database)}`,
    `  instance id: ${config.instanceId}`,
    `  validation:  ${describeValidation(service.bundler.settings.validation)}`,
    ...(devnet || config.paymasterEndpoint
      ? [
          `  paymaster:   ${service.url}  (ERC-7677 pm_getPaymasterStubData, pm_getPaymasterData)`,
          `  sponsorship: ${describeSponsorship(config.sponsorshipPolicy)}`,
        ]
      : []),
    ...service.bundler.entryPoints.all.map((ep) => `  EntryPoint v${ep.version}: ${ep.address}`),
    ...(devnet
      ? [
          "  devnet accounts and paymasters (deposits of 10 ETH; test signer key, never use it on a real network):",
          ...ENTRY_POINT_VERSIONS.flatMap((version) =>
            [`SimpleAccountFactory v${version}:  ${devnet.deployments[version].simpleAccountFactory}`, ...paymasterLines(devnet.deployments[version])].map(
              (line) => `    ${line}`,
            ),
          ),
          `    paymaster signer key: ${DEVNET_PAYMASTER_SIGNER_KEY}`,
        ]
      : []),
    `  relayers:    ${service.bundler.relayers.length > 0 ? service.bundler.relayers.join(", ") : "none (pull mode: the block builder signs)"}`,
    "Press Ctrl-C to stop.",
  ];
}

/** `logLevel` as Effect's minimum log level. */
const minimumLogLevel = { debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const;

NodeRuntime.runMain(program.pipe(Effect.scoped), {
  disableErrorReporting: true,
  // Stopped by a signal: a clean exit. Failed to start: one line, exit 1.
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return onExit(0);
    process.stderr.write(`bundlekit: ${describeFailure(exit.cause)}\n`);
    onExit(1);
  },
});

/** The validation mode and tracer, as the start-up lines say them. */
function describeValidation(validation: Bundler["settings"]["validation"]): string {
  if (validation.mode !== "safe")
    return "unsafe (simulation only; ERC-7562 rules not enforced)";
  const tracer =
    validation.tracer === "in-process"
      ? `in-process tracer, ${validation.tracerWorkers} worker threads`
      : "the node's JavaScript tracer";
  return `safe (ERC-7562 enforced; ${tracer})`;
}
