import { createConsoleLogger } from "@bundlekit/server";
import { startSequencerPath } from "./sequencer-path.ts";

const path = await startSequencerPath({ port: Number(process.env.BUNDLEKIT_PORT ?? 4337), logger: createConsoleLogger("warn") });
process.stdout.write(
  [
    "A sequencer on the devnet pulls a bundle from Bundlekit for every block.",
    `  bundler:  ${path.service.url}  (send user operations here)`,
    `  node:     ${path.devnet.rpcUrl}  (a block every second)`,
    "Press Ctrl-C to stop.",
    "",
  ].join("\n"),
);
path.sequencer.onBlock(({ blockNumber, bundle, fillers }) => {
  if (bundle) process.stdout.write(`block ${blockNumber}: bundle ${bundle.transactionHash} with ${bundle.userOpHashes.length} operations first, then ${fillers.length} transactions\n`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await path.close();
    process.exit(0);
  });
}
