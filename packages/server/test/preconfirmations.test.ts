import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { preconfirmationTypedData, silentLogger } from "@bundlekit/core";
import pg from "pg";
import { type Address, type Hash, type Hex, toHex, verifyTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, inject, it } from "vitest";
import { signBuilderJwt } from "../src/builder-api/builder-jwt.ts";
import { loadConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/** Everything a test started, stopped afterwards whatever happened. */
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** A SQLite file in a fresh directory, or a fresh PostgreSQL schema: one database two services can open. */
async function freshDatabase(backend: "SQLite" | "PostgreSQL"): Promise<string> {
  if (backend === "SQLite") {
    const directory = mkdtempSync(join(tmpdir(), "bundlekit-preconf-"));
    cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
    return join(directory, "bundler.db");
  }
  const admin = new pg.Pool({ connectionString: inject("postgresUrl"), max: 1 });
  const schema = `bundlekit_test_${randomUUID().replaceAll("-", "")}`;
  await admin.query(`create schema ${schema}`);
  cleanups.push(async () => {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });
  const url = new URL(inject("postgresUrl"));
  url.searchParams.set("options", `-c search_path=${schema}`);
  return url.href;
}

/**
 * The settings an operator gives in files: the preconfirmation key, and the builder API's JWT
 * secret (its listener on a free port), as the service reads them.
 */
function fileSettings(key: Hex, jwtSecret: Buffer) {
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-preconf-key-"));
  cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
  writeFileSync(join(directory, "preconfirmation.key"), `${key}\n`);
  writeFileSync(join(directory, "jwt.hex"), jwtSecret.toString("hex"));
  const { preconfirmationKey, builder } = loadConfig({
    BUNDLEKIT_PRECONFIRMATION_KEY_FILE: join(directory, "preconfirmation.key"),
    BUNDLEKIT_BUILDER_PORT: "0",
    BUNDLEKIT_BUILDER_JWT_SECRET_FILE: join(directory, "jwt.hex"),
  });
  return { preconfirmationKey, builder };
}

/** A JSON-RPC call to `url`, with `headers`. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
async function post(url: string, method: string, params: unknown[], headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return response.json();
}

const call = (service: BundlerService, method: string, params: unknown[]) => post(service.url, method, params);

/**
 * Preconfirmations through the stand-alone service, on each database it runs on: signed by the
 * configured key, on the wire as docs/sequencer.md specifies, kept in the database across a
 * restart and seen by every service on it.
 */
describe.each(["SQLite", "PostgreSQL"] as const)("preconfirmations on %s", (backend) => {
  it("committed over the builder API, are signed by the key file's key, survive a restart, are seen by a second service on the database, and are kept on inclusion", async () => {
    const key = generatePrivateKey();
    const signer = privateKeyToAccount(key).address;
    const jwtSecret = randomBytes(32);
    const database = await freshDatabase(backend);
    const fixture: ServiceFixture = await serviceFixture({
      database,
      instanceId: "first",
      ...fileSettings(key, jwtSecret),
      bundler: { bundling: { mode: "pull" } },
    });
    /** A call to the builder API, as a builder in another process makes it. */
    const builderCall = (method: string, params: unknown[]) =>
      post(fixture.service.builderUrl!, method, params, { authorization: `Bearer ${signBuilderJwt(jwtSecret, Math.floor(Date.now() / 1000))}` });
    cleanups.push(() => fixture.close());
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger = { ...silentLogger, info: (message: string, fields?: Record<string, unknown>) => void lines.push({ message, fields }) };
    const restart = async (instanceId: string) => {
      const service = await startBundlerService({ ...fixture.config, instanceId, builder: instanceId === "first" ? fixture.config.builder : undefined }, logger);
      cleanups.push(() => service.close());
      return service;
    };
    const second = await restart("second");

    // bundler_config names the signer, never the key.
    const config = await call(fixture.service, "bundler_config", []);
    expect(config.result.preconfirmationSigner).toBe(signer);
    expect(JSON.stringify(config).toLowerCase()).not.toContain(key.slice(2).toLowerCase());

    const account = await fixture.makeAccount("0.7");
    const sent = await fixture.call("eth_sendUserOperation", [await fixture.signedOperation(account), fixture.entryPoint("0.7")]);
    const userOpHash: Hash = sent.result;
    const latest = await fixture.client.getBlock();
    const blockNumber = latest.number + 1n;
    // The builder has the service sign the bundle, commits it, and sends it only later.
    const { result: proposal } = await builderCall("builder_proposeBundle", [
      { blockNumber: toHex(blockNumber), timestamp: toHex(latest.timestamp + 1n), baseFee: toHex(latest.baseFeePerGas!), gasBudget: toHex(10_000_000n), sign: true },
    ]);
    expect(proposal.userOpHashes).toEqual([userOpHash]);
    expect(await builderCall("builder_commitBundle", [proposal.id])).toMatchObject({ result: true });

    const entryPoint: Address = fixture.entryPoint("0.7");
    const wire = {
      userOpHash,
      entryPoint,
      chainId: toHex(fixture.devnet.chainId),
      blockNumber: toHex(blockNumber),
      transactionHash: proposal.transactionHash,
      signer,
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      status: "promised",
    };
    const lookup = async (service: BundlerService) => (await call(service, "eth_getUserOperationByHash", [userOpHash])).result;
    const promised = await lookup(fixture.service);
    expect(promised).toMatchObject({ transactionHash: proposal.transactionHash, blockNumber: toHex(blockNumber), blockHash: null });
    expect(promised.preconfirmation).toEqual(wire);
    // What a user holds: the wire object verifies with viem alone.
    const { preconfirmation } = promised;
    const typedData = preconfirmationTypedData({
      userOpHash: preconfirmation.userOpHash,
      entryPoint: preconfirmation.entryPoint,
      chainId: Number(preconfirmation.chainId),
      blockNumber: BigInt(preconfirmation.blockNumber),
      transactionHash: preconfirmation.transactionHash,
    });
    expect(await verifyTypedData({ ...typedData, address: preconfirmation.signer, signature: preconfirmation.signature })).toBe(true);

    // Another service on the database sees it; so does the first after a restart.
    expect((await lookup(second)).preconfirmation).toEqual(preconfirmation);
    await fixture.service.close();
    const restarted = await restart("first");
    expect((await lookup(restarted)).preconfirmation).toEqual(preconfirmation);
    // It adopts the operation it committed before the restart: its promised block is yet to come,
    // so it follows the commitment (the transaction is not in the node yet) rather than giving up.
    await expect
      .poll(() => lines.find((line) => line.message === "submitted operations reconciled with the chain")?.fields)
      .toEqual({ included: 0, requeued: 0, stillPending: 1 });

    // The restarted service follows the commitment: mined in the promised block, the promise is kept.
    await fixture.client.sendRawTransaction({ serializedTransaction: proposal.signedTransaction });
    await expect.poll(async () => (await lookup(restarted)).preconfirmation.status).toBe("kept");
    expect(await lookup(second)).toMatchObject({ transactionHash: proposal.transactionHash, blockNumber: toHex(blockNumber), preconfirmation: { ...preconfirmation, status: "kept" } });
  });
});
