#!/usr/bin/env node
/**
 * `bundlekit-server` (`npx @bundlekit/server`, `pnpm start`): the stand-alone bundler service.
 * `--help` and a bad argument are answered here, before the service (or the devnet) starts.
 * Plain `node` in the shebang: the published command is the built `dist/bin.js`; in the workspace
 * the bin is this source, whose types Node 24 strips without a flag.
 */
import { answerCommandLine } from "./command-line.ts";
import { settings } from "./config.ts";

const exitCode = answerCommandLine(process.argv.slice(2), settings, (stream, text) =>
  process[stream].write(text),
);
if (exitCode === undefined) await import("./main.ts");
else process.exitCode = exitCode;
