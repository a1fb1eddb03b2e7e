import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Logger, silentLogger } from "@bundlekit/core";
import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { type BundlerService, loadConfig, startBundlerService } from "@bundlekit/server";
import { type Address, createPublicClient, http, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** Where the Python builder lives: python/builder.py, standard library only. */
export const pythonDirectory = join(import.meta.dirname, "..", "python");

export interface PythonBuilderPath {
  devnet: Devnet;
  /** The stand-alone service in pull mode, with no relayer key: its public endpoint, and its builder API. */
  service: BundlerService;
  client: PublicClient;
  /** The address of the service's preconfirmation key, which the builder checks every preconfirmation against. */
  preconfirmationSigner: Address;
  /** The builder's address: it signs and sends every bundle. */
  builderAddress: Address;
  /** The builder's process: JSON lines on stdout, one per block; commands on stdin without a block time. */
  builder: ChildProcessWithoutNullStreams;
  close(): Promise<void>;
}

/**
 * The Python builder's path on one machine: anvil with automine off and `--order fifo`, the
 * stand-alone service in pull mode with the builder API (a fresh JWT secret in a file) and a
 * fresh preconfirmation key, and `python3 builder.py` driving it over the wire with a devnet key
 * of its own. With `blockTime` (seconds) it builds a block that often; without, when told on stdin.
 */
export async function startPythonBuilderPath(options: { blockTime?: number; port?: number; logger?: Logger } = {}): Promise<PythonBuilderPath> {
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-python-builder-"));
  const devnet = await startDevnet({ order: "fifo" });
  try {
    const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 20 }) as PublicClient;
    await client.request({ method: "evm_setAutomine", params: [false] } as never);
    const secretFile = join(directory, "jwt.hex");
    writeFileSync(secretFile, `${randomBytes(32).toString("hex")}\n`);
    const preconfirmationKey = generatePrivateKey();
    const preconfirmationKeyFile = join(directory, "preconfirmation.key");
    writeFileSync(preconfirmationKeyFile, `${preconfirmationKey}\n`);
    const config = loadConfig({
      BUNDLEKIT_RPC_URL: devnet.rpcUrl,
      BUNDLEKIT_PORT: String(options.port ?? 0),
      BUNDLEKIT_DATABASE: ":memory:",
      BUNDLEKIT_BUNDLING_MODE: "pull",
      BUNDLEKIT_BUILDER_PORT: "0",
      BUNDLEKIT_BUILDER_JWT_SECRET_FILE: secretFile,
      BUNDLEKIT_PRECONFIRMATION_KEY_FILE: preconfirmationKeyFile,
    });
    const service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl }, options.logger ?? silentLogger);
    service.bundler.start();
    const preconfirmationSigner = privateKeyToAccount(preconfirmationKey).address;
    const builderKey = devnet.accountKeys.at(-1)!;
    const builder = spawn(
      "python3",
      [
        "builder.py",
        ...["--builder-url", service.builderUrl!, "--jwt-secret-file", secretFile],
        ...["--node-url", devnet.rpcUrl, "--bundler-url", service.url],
        ...["--preconfirmation-signer", preconfirmationSigner],
        ...(options.blockTime === undefined ? [] : ["--block-time", String(options.blockTime)]),
      ],
      { cwd: pythonDirectory, env: { ...process.env, BUILDER_PRIVATE_KEY: builderKey } },
    );
    return {
      devnet,
      service,
      client,
      preconfirmationSigner,
      builderAddress: privateKeyToAccount(builderKey).address,
      builder,
      async close() {
        if (builder.exitCode === null && builder.signalCode === null) {
          const exited = new Promise((resolve) => builder.once("exit", resolve));
          builder.kill("SIGTERM");
          await exited;
        }
        await service.close();
        await devnet.stop();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await devnet.stop();
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}
