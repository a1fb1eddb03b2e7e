import { createConsoleLogger } from "@bundlekit/server";
import { startPythonBuilderPath } from "./python-builder-path.ts";

const path = await startPythonBuilderPath({ blockTime: 1, port: Number(process.env.BUNDLEKIT_PORT ?? 4337), logger: createConsoleLogger("warn") });
process.stdout.write(
  [
    "A block builder in Python (python/builder.py) pulls a bundle from Bundlekit's builder API for every block.",
    `  bundler:      ${path.service.url}  (send user operations here)`,
    `  builder API:  ${path.service.builderUrl}`,
    `  node:         ${path.devnet.rpcUrl}  (a block every second, mined by the builder)`,
    `  preconfirmations signed by ${path.preconfirmationSigner}`,
    "Press Ctrl-C to stop.",
    "",
  ].join("\n"),
);
path.builder.stdout.pipe(process.stdout);
path.builder.stderr.pipe(process.stderr);
path.builder.once("exit", (code) => {
  process.stderr.write(`the builder exited (${code})\n`);
  void path.close().then(() => process.exit(1));
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    path.builder.removeAllListeners("exit");
    await path.close();
    process.exit(0);
  });
}
