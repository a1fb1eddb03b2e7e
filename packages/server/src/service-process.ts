import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Hex } from "viem";

/** The service's entry beside this module: the source in the workspace, `dist/main.js` when installed. */
const fromSource = import.meta.url.endsWith(".ts");
const mainScript = fileURLToPath(new URL(fromSource ? "./main.ts" : "./main.js", import.meta.url));
const nodeFlags = fromSource ? ["--experimental-strip-types", "--no-warnings"] : [];
const STARTUP_TIMEOUT_MS = 30_000;
const KILL_GRACE_MS = 5_000;
const TAIL_LINES = 40;

export interface StartServiceProcessParameters {
  rpcUrl: string;
  relayerKeys: readonly Hex[];
  /** `BUNDLEKIT_DATABASE`: a SQLite file or a PostgreSQL URL. */
  database: string;
  /** Further settings as `BUNDLEKIT_*` variables (docs/configuration.md); undefined ones are left out. */
  env?: Record<string, string | undefined>;
  /** Told every line the service writes (stdout and stderr), e.g. to keep them in a file. */
  onLine?: (line: string) => void;
}

/** The stand-alone service running in its own Node process, so its CPU time can be read apart. */
export interface ServiceProcess {
  pid: number;
  /** JSON-RPC endpoint, `http://127.0.0.1:PORT/v1/<chainId>/`. */
  url: string;
  /** How many log lines the service wrote at each level so far. */
  logCounts: Record<string, number>;
  /** The last lines the service wrote, for error reports. */
  tail(): string[];
  /** Resolves once the process has exited, with its exit code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after a grace period. Idempotent; resolves once the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash would end it (`kill -9`); resolves once the process is gone. */
  kill(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/**
 * Start the stand-alone service in its own Node process against an existing node
 * (`BUNDLEKIT_RPC_URL`) on a free port, and resolve once it prints its endpoint: for benches and
 * tests that read its CPU time or kill it. The child is killed if this process exits.
 */
export function startServiceProcess(
  parameters: StartServiceProcessParameters,
): Promise<ServiceProcess> {
  const child = spawn(
    process.execPath,
    [...nodeFlags, mainScript],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        BUNDLEKIT_RPC_URL: parameters.rpcUrl,
        BUNDLEKIT_RELAYER_KEYS: parameters.relayerKeys.join(","),
        BUNDLEKIT_HOST: "127.0.0.1",
        BUNDLEKIT_PORT: "0",
        BUNDLEKIT_DATABASE: parameters.database,
        BUNDLEKIT_LOG_LEVEL: "info",
        ...Object.fromEntries(
          Object.entries(parameters.env ?? {}).filter(([, value]) => value !== undefined),
        ),
      },
    },
  );
  live.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  void exited.then(() => live.delete(child));

  const lines: string[] = [];
  const logCounts: Record<string, number> = {};
  const remember = (line: string) => {
    parameters.onLine?.(line);
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
    const level = /^\{"time":"[^"]*","level":"(\w+)"/.exec(line)?.[1];
    if (level) logCounts[level] = (logCounts[level] ?? 0) + 1;
  };
  const follow = (stream: NodeJS.ReadableStream, onLine: (line: string) => void) => {
    let rest = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) onLine(line);
    });
  };

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
      void exited.then(() => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
    return stopping;
  };
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    return exited.then(() => {});
  };

  return new Promise<ServiceProcess>((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${reason}\n${lines.join("\n")}`)));
    };
    const timer = setTimeout(
      () => fail(`the service did not start within ${STARTUP_TIMEOUT_MS} ms`),
      STARTUP_TIMEOUT_MS,
    );
    const onEarlyExit = (code: number | null, signal: string | null) =>
      fail(`the service exited during start-up (code ${code}, signal ${signal})`);
    child.once("exit", onEarlyExit);
    follow(child.stderr!, remember);
    follow(child.stdout!, (line) => {
      remember(line);
      const url = /bundler:\s+(http\S+)/.exec(line)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.off("exit", onEarlyExit);
      resolve({ pid: child.pid!, url, logCounts, tail: () => [...lines], exited, stop, kill });
    });
  });
}
