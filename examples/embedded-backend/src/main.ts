import { startDevnet } from "@bundlekit/devnet";
import type { Hex } from "viem";
import { bundlerPath, startBackend } from "./backend.ts";

/**
 * `pnpm start`: the backend on the embedded devnet (or on RPC_URL with RELAYER_KEYS), at PORT
 * (default 3000). Ctrl-C stops it.
 */
const devnet = process.env.RPC_URL ? undefined : await startDevnet();
const backend = await startBackend({
  rpcUrl: process.env.RPC_URL ?? devnet!.rpcUrl,
  relayerKeys: process.env.RELAYER_KEYS
    ? (process.env.RELAYER_KEYS.split(",") as Hex[])
    : devnet!.relayerKeys,
  port: Number(process.env.PORT ?? 3000),
});
const stop = async () => {
  await backend.close();
  await devnet?.stop();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());

const ws = backend.origin.replace(/^http/, "ws");
process.stdout.write(
  [
    `Backend on chain ${backend.bundler.chainId}${devnet ? " (embedded devnet)" : ""}`,
    `  own route:   GET ${backend.origin}/hello`,
    `  JSON-RPC:    POST ${backend.origin}${bundlerPath}  (WebSocket: ${ws}${bundlerPath})`,
    `  metrics:     GET ${backend.origin}${bundlerPath}/metrics`,
    "Press Ctrl-C to stop.",
    "",
  ].join("\n"),
);
