import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { preconfirmationTypedData, silentLogger } from "@bundlekit/core";
import pg from "pg";
import { type Address, type Hash, type Hex, toHex, verifyTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, inject, it } from "vitest";
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

/** A key file as an operator writes one, and the configuration the service reads from it. */
function preconfirmationKeyFile(key: Hex) {
  const directory = mkdtempSync(join(tmpdir(), "bundlekit-preconf-key-"));
  cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
  const file = join(directory, "preconfirmation.key");
  writeFileSync(file, `${key}\n`);
  return loadConfig({ BUNDLEKIT_PRECONFIRMATION_KEY_FILE: file }).preconfirmationKey;
}

// biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
async function call(service: BundlerService, method: string, params: unknown[]): Promise<any> {
  const response = await fetch(service.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return response.json();
}

/**
 * Preconfirmations through the stand-alone service, on each database it runs on: signed by the
 * configured key, on the wire as docs/sequencer.md specifies, kept in the database across a
 * restart and seen by every service on it.
 */
describe.each(["SQLite", "PostgreSQL"] as const)("preconfirmations on %s", (backend) => {
  it("are signed by the key file's key, survive a restart, are seen by a second service on the database, and are kept on inclusion", async () => {
    const key = generatePrivateKey();
    const signer = privateKeyToAccount(key).address;
    const database = await freshDatabase(backend);
    const fixture: ServiceFixture = await serviceFixture({
      database,
      instanceId: "first",
      preconfirmationKey: preconfirmationKeyFile(key),
      bundler: { bundling: { mode: "pull" } },
    });
    cleanups.push(() => fixture.close());
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger = { ...silentLogger, info: (message: string, fields?: Record<string, unknown>) => void lines.push({ message, fields }) };
    const restart = async (instanceId: string) => {
      const service = await startBundlerService({ ...fixture.config, instanceId }, logger);
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
    const sequencer = privateKeyToAccount(fixture.devnet.accountKeys[12]!);
    const proposal = await fixture.service.bundler.proposeBundle({
      gasBudget: 10_000_000n,
      baseFee: latest.baseFeePerGas!,
      blockNumber,
      timestamp: latest.timestamp + 1n,
      from: sequencer.address,
      signer: sequencer,
    });
    expect(proposal?.userOpHashes).toEqual([userOpHash]);
    await fixture.service.bundler.commitBundle(proposal!.id);

    const entryPoint: Address = fixture.entryPoint("0.7");
    const wire = {
      userOpHash,
      entryPoint,
      chainId: toHex(fixture.devnet.chainId),
      blockNumber: toHex(blockNumber),
      transactionHash: proposal!.transactionHash,
      signer,
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      status: "promised",
    };
    const lookup = async (service: BundlerService) => (await call(service, "eth_getUserOperationByHash", [userOpHash])).result;
    const promised = await lookup(fixture.service);
    expect(promised).toMatchObject({ transactionHash: proposal!.transactionHash, blockNumber: toHex(blockNumber), blockHash: null });
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
      .poll(() => lines.find((line) => line.message === "submitted operations reconciled with the chain")?.fields, { timeout: 15_000 })
      .toEqual({ included: 0, requeued: 0, stillPending: 1 });

    // The restarted service follows the commitment: mined in the promised block, the promise is kept.
    await fixture.client.sendRawTransaction({ serializedTransaction: proposal!.signedTransaction! });
    await expect.poll(async () => (await lookup(restarted)).preconfirmation.status, { timeout: 15_000 }).toBe("kept");
    expect(await lookup(second)).toMatchObject({ transactionHash: proposal!.transactionHash, blockNumber: toHex(blockNumber), preconfirmation: { ...preconfirmation, status: "kept" } });
  });
});
