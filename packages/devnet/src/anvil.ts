import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { dirname, join } from "node:path";

/** Options for {@link startAnvil}. Every field has a default suited to tests. */
export interface StartAnvilOptions {
  /** Port to listen on; `0` (the default) lets the OS pick a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1` so the node is never exposed to the network. */
  host?: string;
  /** Chain id; default 31337. */
  chainId?: number;
  /** Interval mining in seconds (fractions allowed); default: mine one block per transaction. */
  blockTime?: number;
  /** Number of funded accounts derived from `mnemonic`; default 20. */
  accounts?: number;
  /** Balance of each funded account in ETH; default 10000. */
  balance?: number;
  /** Mnemonic of the funded accounts; default anvil's own test mnemonic. */
  mnemonic?: string;
  /** EVM hardfork; default `prague` (EIP-7702 is needed by EntryPoint v0.8). */
  hardfork?: string;
  /** Path of the anvil executable; default `$ANVIL_PATH`, else the binary from `@foundry-rs/anvil`. */
  anvilPath?: string;
  /** When false, anvil's output is echoed to this process's stdout/stderr; default true. */
  silent?: boolean;
  /** How long to wait for anvil to listen before giving up; default 20 s. */
  startupTimeoutMs?: number;
  /** Extra command-line arguments passed to anvil verbatim. */
  extraArgs?: readonly string[];
}

/** A running anvil process owned by this Node process. */
export interface AnvilInstance {
  /** OS process id of anvil. */
  pid: number;
  /** The port anvil actually listens on (resolved when `port: 0` was requested). */
  port: number;
  /** JSON-RPC endpoint, e.g. `http://127.0.0.1:8545`. */
  rpcUrl: string;
  /** Resolves when the anvil process has exited, for whatever reason. */
  exited: Promise<void>;
  /**
   * Stops anvil: SIGTERM, then SIGKILL if it has not exited after a grace period.
   * Idempotent; resolves once the process is gone.
   */
  stop(): Promise<void>;
}

const DEFAULT_STARTUP_TIMEOUT_MS = 20_000;
const KILL_GRACE_MS = 3_000;
const TAIL_CHARS = 4_000;
const LISTENING = /Listening on (\S+)/;

const require = createRequire(import.meta.url);

/**
 * Locates the anvil executable shipped by `@foundry-rs/anvil` (its per-platform package), so that
 * we spawn the native binary directly instead of through the package's Node wrapper script, which
 * would add a second process between us and anvil.
 */
export function resolveAnvilBinary(): string {
  const fromEnv = process.env["ANVIL_PATH"];
  if (fromEnv) return fromEnv;
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const exe = process.platform === "win32" ? "anvil.exe" : "anvil";
  const wrapperDir = dirname(require.resolve("@foundry-rs/anvil/package.json"));
  try {
    // The platform package is a dependency of the wrapper, so resolve it from there.
    return createRequire(join(wrapperDir, "package.json")).resolve(
      `@foundry-rs/anvil-${process.platform}-${arch}/bin/${exe}`,
    );
  } catch {
    // Same fallback as the wrapper: a binary its postinstall script downloaded.
    const fallback = join(wrapperDir, "..", "dist", exe);
    if (existsSync(fallback)) return fallback;
    throw new Error(
      `no anvil binary for ${process.platform}-${process.arch}: install @foundry-rs/anvil ` +
        "with optional dependencies, or set ANVIL_PATH / the anvilPath option",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Process registry: every anvil we spawn is killed when this process exits or is signalled.

const live = new Set<ChildProcess>();
const CLEANUP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
let hooksInstalled = false;

function killAllNow(): void {
  for (const child of live) child.kill("SIGKILL");
}

function onSignal(signal: NodeJS.Signals): void {
  // If nobody else listens for this signal, our listener has disabled Node's default behaviour
  // (terminate); restore it after cleanup by re-raising the signal without our listener.
  const onlyListener = process.listenerCount(signal) === 1;
  const stops = [...live].map((child) => stopChild(child));
  void Promise.allSettled(stops).then(() => {
    if (onlyListener) {
      process.off(signal, onSignal);
      process.kill(process.pid, signal);
    }
  });
}

function track(child: ChildProcess): void {
  live.add(child);
  if (!hooksInstalled) {
    hooksInstalled = true;
    process.on("exit", killAllNow);
    for (const signal of CLEANUP_SIGNALS) process.on(signal, onSignal);
  }
}

function untrack(child: ChildProcess): void {
  live.delete(child);
  if (live.size === 0 && hooksInstalled) {
    hooksInstalled = false;
    process.off("exit", killAllNow);
    for (const signal of CLEANUP_SIGNALS) process.off(signal, onSignal);
  }
}

const stopping = new WeakMap<ChildProcess, Promise<void>>();

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function stopChild(child: ChildProcess): Promise<void> {
  let promise = stopping.get(child);
  if (promise === undefined) {
    promise = new Promise<void>((resolve) => {
      if (hasExited(child)) return resolve();
      // A ref'd timer keeps Node alive until anvil is really gone.
      const timer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
    stopping.set(child, promise);
  }
  return promise;
}

// ---------------------------------------------------------------------------------------------

function buildArgs(options: StartAnvilOptions): string[] {
  const args = [
    "--host",
    options.host ?? "127.0.0.1",
    "--port",
    String(options.port ?? 0),
    "--chain-id",
    String(options.chainId ?? 31337),
    "--hardfork",
    options.hardfork ?? "prague",
    "--accounts",
    String(options.accounts ?? 20),
    "--balance",
    String(options.balance ?? 10_000),
  ];
  if (options.mnemonic !== undefined) args.push("--mnemonic", options.mnemonic);
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.extraArgs) args.push(...options.extraArgs);
  return args;
}

/** Appends to a bounded buffer that keeps only the last {@link TAIL_CHARS} characters. */
function appendTail(tail: string, chunk: string): string {
  const next = tail + chunk;
  return next.length > TAIL_CHARS ? next.slice(-TAIL_CHARS) : next;
}

/**
 * Spawns anvil and resolves once it accepts JSON-RPC connections. The process is tracked and
 * killed if this Node process exits or receives SIGINT/SIGTERM/SIGHUP, so tests cannot leak
 * nodes. It does not keep the event loop alive by itself: call {@link AnvilInstance.stop} when done.
 * Rejects with anvil's stderr tail if it exits early (e.g. port in use) or does not start in time.
 */
export function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilInstance> {
  const binary = options.anvilPath ?? resolveAnvilBinary();
  const silent = options.silent ?? true;
  const timeoutMs = options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  const args = buildArgs(options);

  return new Promise<AnvilInstance>((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    let stdoutTail = "";
    let stderrTail = "";
    let pending = ""; // stdout not yet scanned for the "Listening on" line
    let settled = false;

    const describe = (what: string): string => {
      const output = (stderrTail.trim() || stdoutTail.trim()).split("\n").slice(-20).join("\n");
      const command = [binary, ...args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a));
      return `${what} (${command.join(" ")})${output ? `\nanvil output:\n${output}` : ""}`;
    };
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };

    const timer = setTimeout(
      () => fail(new Error(describe(`anvil did not start listening within ${timeoutMs} ms`))),
      timeoutMs,
    );

    if (child.pid !== undefined) track(child);
    child.once("exit", (code, signal) => {
      untrack(child);
      fail(new Error(describe(`anvil exited during start-up (code ${code}, signal ${signal})`)));
    });
    child.once("error", (error) => {
      untrack(child);
      fail(new Error(describe(`could not run anvil: ${error.message}`)));
    });

    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderrTail = appendTail(stderrTail, chunk);
      if (!silent) process.stderr.write(chunk);
    });
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      // Keep draining stdout for the whole life of the process: anvil logs every RPC call and
      // would block once the pipe buffer is full.
      stdoutTail = appendTail(stdoutTail, chunk);
      if (!silent) process.stdout.write(chunk);
      if (settled) return;
      pending += chunk;
      const match = LISTENING.exec(pending);
      if (match === null) {
        pending = pending.slice(-200);
        return;
      }
      const address = match[1]!;
      const port = Number(address.slice(address.lastIndexOf(":") + 1));
      if (!Number.isInteger(port) || port <= 0) {
        fail(new Error(describe(`could not parse anvil's listen address "${address}"`)));
        return;
      }
      settled = true;
      clearTimeout(timer);
      // From now on the anvil process must not keep Node alive on its own; the exit hook kills it.
      child.unref();
      (child.stdout as Socket | null)?.unref();
      (child.stderr as Socket | null)?.unref();
      const host = options.host ?? "127.0.0.1";
      const urlHost = host.includes(":") ? `[${host}]` : host;
      resolve({
        pid: child.pid!,
        port,
        rpcUrl: `http://${urlHost}:${port}`,
        exited,
        stop: () => stopChild(child),
      });
    });
  });
}
