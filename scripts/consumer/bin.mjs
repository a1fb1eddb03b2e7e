// The command from the installed tarball, as `npx @bundlekit/server` runs it: `bundlekit-server
// --help` prints its usage and exits 0; with no RPC URL the command starts the service on its
// embedded devnet, `eth_supportedEntryPoints` over HTTP names the four EntryPoints, and SIGINT
// stops the service and its devnet. Then `startServiceProcess` runs the same service from code, in
// a process of its own, on a devnet. `pnpm check:consumer` runs it with Node 22 and Node 24: the
// command's `#!/usr/bin/env node` finds the Node running this script first on PATH. Every wait is
// bounded, and on failure the service's process group (the service and its anvil) is killed.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { startDevnet } from "@bundlekit/devnet";
import { startServiceProcess } from "@bundlekit/server";

const command = join("node_modules", ".bin", "bundlekit-server");
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 10_000;
const ENTRY_POINTS = [
  "0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789", // v0.6
  "0x0000000071727de22e5e9d8baf0edac6f37da032", // v0.7
  "0x4337084d9e255ff0702461cf8895ce9e3b5ff108", // v0.8
  "0x433709009b8330fda32311df1c2afa402ed8d009", // v0.9
];

/** This Node first on PATH, no BUNDLEKIT_* settings from outside, and any free port. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith("BUNDLEKIT_")),
);
env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
env.BUNDLEKIT_PORT = "0";

const help = spawnSync(command, ["--help"], { env, encoding: "utf8", timeout: 30_000 });
if (help.status !== 0 || !help.stdout.startsWith("Usage: bundlekit-server"))
  throw new Error(
    `bundlekit-server --help exited with ${help.status ?? help.signal ?? help.error}:\n${help.stdout}${help.stderr}`,
  );

// Its own process group, so that a failed check can stop the devnet's anvil with it.
const service = spawn(command, [], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
let output = "";
service.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
service.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
const exited = once(service, "exit");

/**
 * Rejects after `ms` with `what`, unless `promise` settles first.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
async function within(promise, ms, what) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {Promise<never>} */
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Asks the service at `url` for its EntryPoints; throws unless they are the three canonical ones.
 * @param {string} url
 */
async function checkEntryPoints(url) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_supportedEntryPoints" }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const { result } = /** @type {{ result?: string[] }} */ (await response.json());
  const entryPoints = (result ?? []).map((address) => address.toLowerCase()).sort();
  if (JSON.stringify(entryPoints) !== JSON.stringify([...ENTRY_POINTS].sort()))
    throw new Error(`${url} answered eth_supportedEntryPoints with ${JSON.stringify(result)}`);
  return result;
}

/** True while any process of the service's group (the service, its anvil) is alive. */
function groupAlive() {
  try {
    process.kill(-(/** @type {number} */ (service.pid)), 0);
    return true;
  } catch {
    return false;
  }
}

try {
  const started = new Promise((resolve, reject) => {
    service.stdout.on("data", () => {
      if (output.includes("Press Ctrl-C to stop.")) resolve(undefined);
    });
    exited.then(
      ([code, signal]) =>
        reject(new Error(`bundlekit-server exited during start-up (${code ?? signal})`)),
      reject,
    );
  });
  await within(started, START_TIMEOUT_MS, "bundlekit-server did not print its endpoint");
  const url = /^ {2}bundler: +(\S+)/m.exec(output)?.[1];
  if (url === undefined) throw new Error("bundlekit-server printed no bundler URL");

  const entryPoints = await checkEntryPoints(url);

  service.kill("SIGINT");
  const [code, signal] = await within(
    exited,
    STOP_TIMEOUT_MS,
    "bundlekit-server did not stop on SIGINT",
  );
  if (code !== 0) throw new Error(`bundlekit-server exited with ${code ?? signal} on SIGINT`);
  // The service stops its devnet's anvil, and waits for it, before it exits.
  if (groupAlive()) throw new Error("the devnet's anvil outlived bundlekit-server after SIGINT");

  console.log(
    JSON.stringify({
      node: process.version,
      help: "usage",
      served: url,
      entryPoints,
      sigint: code,
    }),
  );
} catch (error) {
  console.error(output);
  throw error;
} finally {
  if (groupAlive()) process.kill(-(/** @type {number} */ (service.pid)), "SIGKILL");
}

// The service from code in a Node process of its own (as the benchmarks run it): from the installed
// package that is the built `dist/main.js`. Its start-up and stop are bounded by the package.
const devnet = await startDevnet({ relayerCount: 1 });
try {
  const child = await startServiceProcess({
    rpcUrl: devnet.rpcUrl,
    relayerKeys: devnet.relayerKeys,
    database: ":memory:",
  });
  try {
    await checkEntryPoints(child.url);
    console.log(JSON.stringify({ node: process.version, startServiceProcess: child.url }));
  } finally {
    await child.stop();
  }
} finally {
  await devnet.stop();
}
