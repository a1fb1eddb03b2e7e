import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Logger, silentLogger } from "@bundlekit/core";
import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { type BundlerService, loadConfig, startBundlerService } from "@bundlekit/server";
import { createPublicClient, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createFifoPerSenderPolicy } from "./fifo-per-sender-policy.ts";
import { builderApiClient } from "./builder-api-client.ts";
import { type Sequencer, startSequencer } from "./sequencer.ts";

export interface SequencerPath {
  devnet: Devnet;
  /** The stand-alone bundler service, in pull mode: its endpoint is where users send operations. */
  service: BundlerService;
  sequencer: Sequencer;
  client: PublicClient;
  close(): Promise<void>;
}

/**
 * The whole path on one machine: anvil as the rollup's chain (automine off, transactions in
 * arrival order), the stand-alone service in pull mode with the operator's policy, and the
 * sequencer that builds a block every `blockTimeMs`, or when told.
 */
export async function startSequencerPath(
  options: {
    /** Milliseconds between blocks (default 1000), or "on demand": a block whenever `sequencer.next()` is called. */
    blockTimeMs?: number | "on demand";
    port?: number;
    logger?: Logger;
    /** The sequencer pulls over the service's builder API (JSON-RPC, JWT) instead of calling the engine in process. */
    builderApi?: boolean;
  } = {},
): Promise<SequencerPath> {
  const devnet = await startDevnet({ order: "fifo" });
  try {
    const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 50 }) as PublicClient;
    await client.request({ method: "evm_setAutomine", params: [false] } as never);
    const secret = options.builderApi ? randomBytes(32) : undefined;
    const config = withBuilderApi(secret, {
      BUNDLEKIT_RPC_URL: devnet.rpcUrl,
      BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
      BUNDLEKIT_PORT: String(options.port ?? 0),
      BUNDLEKIT_DATABASE: ":memory:",
      BUNDLEKIT_BUNDLING_MODE: "pull",
    });
    const service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl }, options.logger ?? silentLogger, {
      policy: createFifoPerSenderPolicy(),
    });
    service.bundler.start();
    const [sequencerKey, fillerKey] = devnet.accountKeys.slice(-2);
    const sequencer = startSequencer({
      client,
      rpcUrl: devnet.rpcUrl,
      bundler: secret ? builderApiClient({ url: service.builderUrl!, secret, client }) : service.bundler,
      sequencer: privateKeyToAccount(sequencerKey!),
      filler: privateKeyToAccount(fillerKey!),
      blockTimeMs: options.blockTimeMs === "on demand" ? undefined : (options.blockTimeMs ?? 1_000),
    });
    return {
      devnet,
      service,
      sequencer,
      client,
      async close() {
        await sequencer.stop();
        await service.close();
        await devnet.stop();
      },
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}

/** The service's settings from `environment`, with the builder API on a free port when there is a `secret` (read from a file, as the service reads it). */
function withBuilderApi(secret: Buffer | undefined, environment: Record<string, string>) {
  if (!secret) return loadConfig(environment);
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-sequencer-"));
  try {
    const file = join(directory, "jwt.hex");
    writeFileSync(file, secret.toString("hex"));
    return loadConfig({ ...environment, BUNDLEKIT_BUILDER_PORT: "0", BUNDLEKIT_BUILDER_JWT_SECRET_FILE: file });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
