/**
 * `pnpm devnet`: starts a devnet in the foreground for manual testing and examples, prints its
 * endpoints and test keys, and runs until Ctrl-C (exit code 0).
 *
 *   node --experimental-strip-types --no-warnings src/cli.ts [--port 8545] [--chain-id 31337]
 *     [--block-time SECONDS] [--order fees|fifo] [--relayers 2] [--verbose]
 *
 * The port may also come from DEVNET_PORT.
 */
import { connect } from "node:net";
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { ENTRY_POINT_VERSIONS } from "./addresses.ts";
import { startDevnet } from "./devnet.ts";
import { DEVNET_PAYMASTER_SIGNER_KEY, paymasterLines } from "./paymasters.ts";

const USAGE = `Usage: devnet [--port N] [--chain-id N] [--block-time SECONDS] [--order fees|fifo] [--relayers N] [--verbose]
  --port        port to listen on (default: $DEVNET_PORT or 8545; 0 = any free port)
  --chain-id    chain id (default 31337)
  --block-time  interval mining in seconds (default: automine)
  --order       a block's transactions: fees (highest priority fee first, default) or fifo (arrival order)
  --relayers    number of relayer keys to reserve (default 2)
  --verbose     echo anvil's log`;

function numberOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`--${name}: not a number: ${raw}`);
  return value;
}

/** Resolves when nothing listens on the port any more (anvil died on its own). */
function watchPort(port: number, intervalMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const socket = connect({ host: "127.0.0.1", port });
      socket.once("connect", () => socket.destroy());
      socket.once("error", () => {
        clearInterval(timer);
        resolve();
      });
    }, intervalMs);
  });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      "chain-id": { type: "string" },
      "block-time": { type: "string" },
      order: { type: "string" },
      relayers: { type: "string" },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }

  const devnet = await startDevnet({
    port: numberOption("port", values.port ?? process.env["DEVNET_PORT"]) ?? 8545,
    chainId: numberOption("chain-id", values["chain-id"]),
    blockTime: numberOption("block-time", values["block-time"]),
    order: values.order as "fees" | "fifo" | undefined,
    relayerCount: numberOption("relayers", values.relayers),
    silent: !values.verbose,
  });

  const keyLine = (key: Hex): string => `  ${key}  (${privateKeyToAddress(key)})`;
  const lines = [
    "Bundlekit devnet (anvil, hardfork prague)",
    `RPC URL:   ${devnet.rpcUrl}`,
    `Chain id:  ${devnet.chainId}`,
    "",
    ...ENTRY_POINT_VERSIONS.flatMap((version) => {
      const d = devnet.deployments[version];
      return [
        `EntryPoint v${version}:            ${d.entryPoint}`,
        `SimpleAccountFactory v${version}:  ${d.simpleAccountFactory}`,
        ...paymasterLines(d),
      ];
    }),
    "",
    "TEST KEYS ONLY (public anvil mnemonic, never use them on a real network)",
    `Verifying paymaster signer: ${keyLine(DEVNET_PAYMASTER_SIGNER_KEY).trim()}`,
    `Relayer keys (${devnet.relayerKeys.length}):`,
    ...devnet.relayerKeys.map(keyLine),
    `Account keys (${devnet.accountKeys.length}):`,
    ...devnet.accountKeys.map(keyLine),
    "",
    "Press Ctrl-C to stop.",
  ];
  console.log(lines.join("\n"));

  const port = Number(new URL(devnet.rpcUrl).port);
  const signalled = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  // The port watcher's timer also keeps the process alive (the devnet itself does not).
  const outcome = await Promise.race([signalled, watchPort(port, 1_000).then(() => "died")]);
  await devnet.stop();
  if (outcome === "died") {
    console.error("anvil stopped unexpectedly");
    return 1;
  }
  console.log("\nDevnet stopped.");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
