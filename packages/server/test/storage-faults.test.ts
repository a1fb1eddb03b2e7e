import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Devnet, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import pg from "pg";
import { createPublicClient, http, parseEther, toHex } from "viem";
import { createBundlerClient, formatUserOperationRequest } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import {
  isRoot,
  recordingLogger,
  setWritable,
  sqliteFiles,
} from "../../../packages/storage-kysely/test/file-faults.ts";
import { loadConfig } from "../src/config.ts";
import { startBundlerService } from "../src/server.ts";
import { startServiceProcess } from "../src/service-process.ts";
import { openStores } from "../src/stores.ts";

/** The stand-alone service on a SQLite file whose files fail under it. */
describe("storage faults in the service", () => {
  let devnet: Devnet;
  const directories: string[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    devnet = await startDevnet();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    for (const directory of directories.splice(0)) {
      setWritable(join(directory, "bundler.db"), true);
      rmSync(directory, { recursive: true, force: true });
    }
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  function databaseFile(): string {
    const directory = mkdtempSync(join(tmpdir(), "bundlekit-service-faults-"));
    directories.push(directory);
    return join(directory, "bundler.db");
  }

  async function start(database: string) {
    const logger = recordingLogger();
    const config = loadConfig({
      BUNDLEKIT_RPC_URL: devnet.rpcUrl,
      BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
      BUNDLEKIT_PORT: "0",
      BUNDLEKIT_DATABASE: database,
      BUNDLEKIT_BUNDLING_MODE: "manual",
    });
    const service = await startBundlerService({ ...config, rpcUrl: devnet.rpcUrl }, logger);
    cleanups.push(() => service.close());
    return { service, logger, health: () => health(service.url) };
  }

  /** A signed v0.7 operation of a fresh account (funded by the devnet), prepared through the service at `url`. */
  async function signedOperation(url: string) {
    const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
    const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version: "0.7" });
    await client.request({ method: "anvil_setBalance", params: [account.address, toHex(parseEther("1"))] } as never);
    const prepared = await createBundlerClient({ account, client, transport: http(url) }).prepareUserOperation({ calls: [{ to: account.address, value: 0n }] });
    const signature = await account.signUserOperation(prepared as never);
    return [formatUserOperationRequest({ ...prepared, signature } as never), account.entryPoint.address];
  }

  it("read-only database files: sends answer -32603 naming the file and the cause, which is logged; /health is 503 until the files are writable again", async () => {
    const database = databaseFile();
    const { service, logger, health } = await start(database);
    const first = await signedOperation(service.url);
    const second = await signedOperation(service.url);
    expect((await rpc(service.url, "eth_sendUserOperation", first)).result).toMatch(
      /^0x[0-9a-f]{64}$/,
    );
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });

    setWritable(database, false);
    const refused = (await rpc(service.url, "eth_sendUserOperation", second)).error;
    expect(refused).toEqual({
      code: -32603,
      message: expect.stringMatching(
        new RegExp(
          `^the database file ${database} is not writable \\(${database}(-wal|-shm)?: (EPERM|EACCES)\\)$`,
        ),
      ),
    });
    const reason = refused.message.slice(`the database file ${database} `.length);
    expect(await health()).toEqual({
      status: 503,
      body: { status: "unavailable", reason: refused.message },
    });
    expect(logger.lines).toContainEqual({
      level: "error",
      message: "database unavailable",
      fields: { file: database, reason },
    });

    setWritable(database, true);
    expect(await health()).toEqual({ status: 200, body: { status: "ok" } });
    expect((await rpc(service.url, "eth_sendUserOperation", second)).result).toMatch(
      /^0x[0-9a-f]{64}$/,
    );
    expect(logger.lines).toContainEqual({
      level: "info",
      message: "the database can write again",
      fields: { database },
    });
  });

  it("a deleted database file: sends are refused with -32603 saying the file is gone, and /health is 503", async () => {
    const database = databaseFile();
    const { service, health } = await start(database);
    const op = await signedOperation(service.url);
    for (const file of sqliteFiles(database)) rmSync(file, { force: true });
    const gone = `the database file ${database} is gone: deleted while the service runs; what is written now would be lost on restart`;
    expect((await rpc(service.url, "eth_sendUserOperation", op)).error).toEqual({
      code: -32603,
      message: gone,
    });
    expect(await health()).toEqual({ status: 503, body: { status: "unavailable", reason: gone } });
  });

  // About the process: a SIGBUS ends it. Only root can set the immutable flag, the fault that
  // leaves SQLite's mapped `-shm` index unwritable under a running process.
  it.runIf(isRoot)(
    "bundling with unwritable database files logs the fault, the process keeps answering, and SIGTERM ends it cleanly (no SIGBUS)",
    async () => {
      const database = databaseFile();
      const lines: string[] = [];
      const service = await startServiceProcess({
        rpcUrl: devnet.rpcUrl,
        relayerKeys: devnet.relayerKeys,
        database,
        env: { BUNDLEKIT_BUNDLING_MODE: "manual", BUNDLEKIT_DEBUG_METHODS: "true" },
        onLine: (line) => lines.push(line),
      });
      cleanups.push(() => service.kill());
      expect(
        (await rpc(service.url, "eth_sendUserOperation", await signedOperation(service.url)))
          .result,
      ).toMatch(/^0x/);
      setWritable(database, false);
      expect((await rpc(service.url, "debug_bundler_sendBundleNow", [])).error).toMatchObject({
        code: -32603,
        message: expect.stringMatching(/is not writable \(.*: EPERM\)$/),
      });
      expect((await health(service.url)).status).toBe(503);
      expect(
        lines.some((line) => line.includes('"database unavailable"') && line.includes("EPERM")),
      ).toBe(true);
      await service.stop();
      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(
        lines.some((line) =>
          line.includes('"database left open: closing it would write to its unwritable files"'),
        ),
      ).toBe(true);
    },
  );
});

describe("the health check on PostgreSQL", () => {
  it("fails with PostgreSQL's error while the role may not insert, logs it, and passes once it may", async () => {
    const connectionString = inject("postgresUrl");
    const id = randomUUID().replaceAll("-", "");
    const [schema, role] = [`bundlekit_health_${id}`, `bundlekit_health_${id}`];
    const admin = new pg.Pool({ connectionString, max: 1 });
    const asRole = new URL(connectionString);
    asRole.username = role;
    asRole.searchParams.set("options", `-c search_path=${schema}`);
    const logger = recordingLogger();
    try {
      await admin.query(
        `create schema ${schema}; create role ${role} login; grant usage, create on schema ${schema} to ${role}`,
      );
      const stores = await openStores(asRole.href, logger); // migrated by the role: it owns the tables
      try {
        await admin.query(`revoke insert on all tables in schema ${schema} from ${role}`);
        await expect(stores.checkHealth()).rejects.toThrow(
          "permission denied for table user_operations",
        );
        await admin.query(`grant insert on all tables in schema ${schema} to ${role}`);
        await stores.checkHealth();
        const database = `postgres://${role}@${asRole.host}${asRole.pathname}?…`;
        expect(logger.lines).toEqual([
          {
            level: "error",
            message: "the database cannot write",
            fields: { database, reason: "permission denied for table user_operations" },
          },
          { level: "info", message: "the database can write again", fields: { database } },
        ]);
      } finally {
        await stores.close();
      }
    } finally {
      await admin.query(`drop schema if exists ${schema} cascade; drop role if exists ${role}`);
      await admin.end();
    }
  });
});

// biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return response.json();
}

/** `GET /health` of the service at `url`. */
async function health(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(new URL("/health", url));
  return { status: response.status, body: await response.json() };
}
