import { DEVNET_PAYMASTER_SIGNER_KEY, type Devnet, ENTRY_POINT_VERSIONS, paymasterLines, startDevnet } from "@bundlekit/devnet";
import { ConfigError, loadConfig, redactUrl } from "./config.ts";
import { describeDatabase } from "./database-url.ts";
import { createConsoleLogger } from "./logger.ts";
import { type BundlerService, startBundlerService } from "./server.ts";

/**
 * `pnpm start`: serve the chain at BUNDLEKIT_RPC_URL, or with no RPC URL start the embedded
 * devnet (anvil with the canonical EntryPoints) and serve that. Ctrl-C stops everything.
 */
async function main() {
  const config = loadConfig(process.env, process.argv.slice(2));
  const logger = createConsoleLogger(config.logLevel);
  let devnet: Devnet | undefined;
  let service: BundlerService | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await service?.close().catch(() => {});
    await devnet?.stop().catch(() => {});
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  try {
    if (config.rpcUrl) {
      service = await startBundlerService({ ...config, rpcUrl: config.rpcUrl }, logger);
    } else {
      devnet = await startDevnet();
      const started = devnet;
      service = await startBundlerService(
        { ...config, rpcUrl: started.rpcUrl, relayerKeys: config.relayerKeys.length > 0 ? config.relayerKeys : started.relayerKeys },
        logger,
        {
          // On the devnet the service sponsors through the devnet's verifying paymasters (ERC-7677).
          paymaster: {
            signerKey: DEVNET_PAYMASTER_SIGNER_KEY,
            paymasters: Object.fromEntries(ENTRY_POINT_VERSIONS.map((version) => [version, started.deployments[version].paymasters.verifying])),
          },
        },
      );
    }
  } catch (error) {
    await devnet?.stop().catch(() => {});
    if (error instanceof ConfigError) {
      process.stderr.write(`bundlekit: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  const lines = [
    `Bundlekit is serving chain ${service.chainId}`,
    `  bundler:     ${service.url}`,
    `  websocket:   ${service.webSocketUrl}`,
    `  node:        ${devnet ? devnet.rpcUrl : redactUrl(config.rpcUrl!)}${devnet ? "  (embedded devnet)" : ""}`,
    `  chain id:    ${service.chainId}`,
    `  database:    ${describeDatabase(config.database)}`,
    `  instance id: ${config.instanceId}`,
    `  validation:  ${describeValidation(service.bundler.config)}`,
    ...(devnet || config.paymasterEndpoint ? [`  paymaster:   ${service.url}  (ERC-7677 pm_getPaymasterStubData, pm_getPaymasterData)`] : []),
    ...service.bundler.entryPoints.all.map((ep) => `  EntryPoint v${ep.version}: ${ep.address}`),
    ...(devnet
      ? [
          "  devnet paymasters (deposits of 10 ETH; test signer key, never use it on a real network):",
          ...ENTRY_POINT_VERSIONS.flatMap((version) => paymasterLines(devnet!.deployments[version]).map((line) => `    ${line}`)),
          `    paymaster signer key: ${DEVNET_PAYMASTER_SIGNER_KEY}`,
        ]
      : []),
    `  relayers:    ${service.bundler.relayers.join(", ")}`,
    "Press Ctrl-C to stop.",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`bundlekit: ${error.message}\n`);
  } else {
    process.stderr.write(`bundlekit: failed to start: ${(error as Error).message?.split("\n")[0]}\n`);
  }
  process.exit(1);
});

/** The validation mode and tracer, as the start-up lines say them. */
function describeValidation(config: { validationMode: string; validationTracer: string; tracerWorkers: number }): string {
  if (config.validationMode !== "safe") return "unsafe (simulation only; ERC-7562 rules not enforced)";
  const tracer = config.validationTracer === "in-process" ? `in-process tracer, ${config.tracerWorkers} worker threads` : "the node's JavaScript tracer";
  return `safe (ERC-7562 enforced; ${tracer})`;
}
