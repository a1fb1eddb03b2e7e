import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { findOrStartPostgres } from "./postgres-server.ts";

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = await listening();
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function listening(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("findOrStartPostgres", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it("uses the URL it is given without looking further", async () => {
    const server = await findOrStartPostgres({ url: "postgres://someone@db.example:5433/x", probe: { host: "127.0.0.1", port: await closedPort() } });
    expect(server).toMatchObject({ url: "postgres://someone@db.example:5433/x", source: "environment" });
  });

  it("uses a server that answers at the probed address", async () => {
    const running = await listening();
    cleanups.push(() => new Promise((resolve) => running.close(() => resolve())));
    const { port } = running.address() as { port: number };
    const server = await findOrStartPostgres({ url: undefined, probe: { host: "127.0.0.1", port } });
    expect(server).toMatchObject({ url: `postgres://postgres@127.0.0.1:${port}/test`, source: "running" });
  });

  it("brings a real PostgreSQL when none answers, and stops it afterwards", async () => {
    const server = await findOrStartPostgres({ url: undefined, probe: { host: "127.0.0.1", port: await closedPort() } });
    cleanups.push(() => server.stop());
    expect(server.source).toBe("embedded");

    await query(server.url, "create schema bundlekit_probe; create table bundlekit_probe.t (n int primary key)");
    await query(server.url, "insert into bundlekit_probe.t values (1), (2)");
    expect(await query(server.url, "select count(*)::int as n from bundlekit_probe.t")).toEqual([{ n: 2 }]);

    await server.stop();
    await expect(query(server.url, "select 1")).rejects.toThrow(/ECONNREFUSED/);
  });

  it("leaves the exit code of the process that started one alone", { timeout: 120_000 }, async () => {
    // A test run with failures sets process.exitCode and ends when nothing is left to do.
    const script = `
      import { findOrStartPostgres } from ${JSON.stringify(fileURLToPath(new URL("./postgres-server.ts", import.meta.url)))};
      const server = await findOrStartPostgres({ url: undefined, probe: { host: "127.0.0.1", port: ${await closedPort()} } });
      if (server.source !== "embedded") throw new Error(server.source);
      await server.stop();
      process.exitCode = 3;
    `;
    const run = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(3);
  });
});
