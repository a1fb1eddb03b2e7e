import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Logger, silentLogger } from "@bundlekit/core";
import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { type BundlerService, loadConfig, startBundlerService } from "@bundlekit/server";
import { createPublicClient, type Hex, http, type PublicClient } from "viem";
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
    /** The key the service signs preconfirmations with (EIP-712); without it they are unsigned. */
    preconfirmationKey?: Hex;
  } = {},
): Promise<SequencerPath> {
  const devnet = await startDevnet({ order: "fifo" });
  try {
    const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 50 }) as PublicClient;
    await client.request({ method: "evm_setAutomine", params: [false] } as never);
    const secret = options.builderApi ? randomBytes(32) : undefined;
    const config = loadConfigWithFiles(
      {
        BUNDLEKIT_RPC_URL: devnet.rpcUrl,
        BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
        BUNDLEKIT_PORT: String(options.port ?? 0),
        BUNDLEKIT_DATABASE: ":memory:",
        BUNDLEKIT_BUNDLING_MODE: "pull",
        ...(secret ? { BUNDLEKIT_BUILDER_PORT: "0" } : {}),
      },
      {
        ...(secret ? { BUNDLEKIT_BUILDER_JWT_SECRET_FILE: secret.toString("hex") } : {}),
        ...(options.preconfirmationKey ? { BUNDLEKIT_PRECONFIRMATION_KEY_FILE: options.preconfirmationKey } : {}),
      },
    );
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

/** The service's settings from `environment`, and from `files`: each setting a file, with its content (secrets, as the service reads them). */
function loadConfigWithFiles(environment: Record<string, string>, files: Record<string, string>) {
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-sequencer-"));
  try {
    const paths = Object.entries(files).map(([setting, content], i) => {
      const file = join(directory, String(i));
      writeFileSync(file, content);
      return [setting, file];
    });
    return loadConfig({ ...environment, ...Object.fromEntries(paths) });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
