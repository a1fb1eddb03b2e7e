import { randomUUID } from "node:crypto";
import { type Devnet, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import pg from "pg";
import {
  createPublicClient,
  createWalletClient,
  type Hash,
  type Hex,
  http,
  parseAbiItem,
  parseEther,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, formatUserOperationRequest, type SmartAccount } from "viem/account-abstraction";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ServiceProcess, startServiceProcess } from "../src/service-process.ts";
import { openStores } from "../src/stores.ts";
import { silentLogger } from "@bundlekit/core";

const userOperationEvent = parseAbiItem(
  "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)",
);

/** Everything a test started, stopped afterwards whatever happened. */
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/**
 * A fresh schema in the PostgreSQL the run found (`inject("postgresUrl")`), as a URL with the
 * schema as its search path and a password: the server's own, or any (a server that trusts
 * local connections ignores it). Also the line the service prints for it, the password masked.
 */
async function freshDatabase(): Promise<{ url: string; password: string; printed: string }> {
  const base = inject("postgresUrl");
  const schema = `bundlekit_test_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Pool({ connectionString: base, max: 1 });
  await admin.query(`create schema ${schema}`);
  cleanups.push(async () => {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });
  const url = new URL(base);
  url.password ||= "s3cret-pw";
  url.searchParams.set("options", `-c search_path=${schema}`);
  const printed = `${url.protocol}//${url.username}:***@${url.host}${url.pathname}?…`;
  return { url: url.href, password: decodeURIComponent(url.password), printed };
}

async function devnetWithRelayers(count: number) {
  const devnet: Devnet = await startDevnet({ relayerCount: count });
  cleanups.push(() => devnet.stop());
  const client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 50 }) as PublicClient;
  return { devnet, client };
}

/** A service process on `database` with its own relayer keys and instance id. */
async function startInstance(devnet: Devnet, database: string, relayerKeys: Hex[], instanceId: string, env: Record<string, string> = {}) {
  const service = await startServiceProcess({
    rpcUrl: devnet.rpcUrl,
    relayerKeys,
    database,
    env: { BUNDLEKIT_INSTANCE_ID: instanceId, ...env },
  });
  cleanups.push(() => service.stop());
  return service;
}

/** Funded SimpleAccounts (v0.7) with fresh owners from the devnet's keys. */
async function fundedAccounts(devnet: Devnet, client: PublicClient, count: number): Promise<SmartAccount[]> {
  const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
  const accounts = await Promise.all(
    devnet.accountKeys.slice(0, count).map((key) => toSimpleAccount({ client, owner: privateKeyToAccount(key), version: "0.7" })),
  );
  for (const account of accounts) {
    await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1"), chain: devnet.chain }) });
  }
  return accounts;
}

// biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
async function call(service: ServiceProcess, method: string, params: unknown[] = []): Promise<any> {
  const response = await fetch(service.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Prepare (estimated by `service`), sign and send the next operation of `account`, at `nonce`. */
async function send(service: ServiceProcess, client: PublicClient, account: SmartAccount, nonce: bigint): Promise<Hash> {
  const bundler = createBundlerClient({ account, client, transport: http(service.url) });
  const prepared = await bundler.prepareUserOperation({ calls: [{ to: account.address, value: 0n }], nonce });
  const op = formatUserOperationRequest({ ...prepared, signature: await account.signUserOperation(prepared as never) } as never);
  return call(service, "eth_sendUserOperation", [op, account.entryPoint.address]);
}

/** How many `UserOperationEvent`s each hash has on chain. */
async function eventsOnChain(client: PublicClient, entryPoint: Hex): Promise<Map<Hash, number>> {
  const logs = await client.getLogs({ address: entryPoint, event: userOperationEvent, fromBlock: 0n, toBlock: "latest" });
  const counts = new Map<Hash, number>();
  for (const log of logs) counts.set(log.args.userOpHash!, (counts.get(log.args.userOpHash!) ?? 0) + 1);
  return counts;
}

describe("the service's PostgreSQL pool", () => {
  it("opens at most databasePoolSize connections, however many store calls wait at once", async () => {
    const url = new URL((await freshDatabase()).url);
    const application = `bundlekit_pool_${randomUUID().slice(0, 8)}`;
    url.searchParams.set("application_name", application);
    const stores = await openStores(url.href, silentLogger, { poolSize: 2 });
    cleanups.push(() => stores.close());
    await Promise.all(Array.from({ length: 20 }, (_, i) => stores.store.get(`0x${i.toString(16).padStart(64, "0")}`)));
    const admin = new pg.Pool({ connectionString: inject("postgresUrl"), max: 1 });
    cleanups.push(() => admin.end());
    const { rows } = await admin.query("select count(*)::int as open from pg_stat_activity where application_name = $1", [application]);
    expect(rows[0].open).toBe(2);
  });
});

describe("several service processes on one PostgreSQL", () => {
  it("two instances sharing the database include every operation sent to either exactly once", { timeout: 180_000 }, async () => {
    const { url: database, password, printed } = await freshDatabase();
    const { devnet, client } = await devnetWithRelayers(4);
    const instances = [
      await startInstance(devnet, database, devnet.relayerKeys.slice(0, 2), "instance-a"),
      await startInstance(devnet, database, devnet.relayerKeys.slice(2, 4), "instance-b"),
    ];
    const accounts = await fundedAccounts(devnet, client, 4);
    const entryPoint = accounts[0]!.entryPoint.address;

    // Each account's operations go to the two instances in turn; the first deploys the account.
    const hashes: Hash[] = [];
    await Promise.all(
      accounts.map(async (account, index) => {
        const first = await send(instances[index % 2]!, client, account, 0n);
        hashes.push(first);
        await expect.poll(() => call(instances[(index + 1) % 2]!, "eth_getUserOperationReceipt", [first]), { timeout: 30_000, interval: 200 }).not.toBeNull();
        // Queued nonces: the second instance simulates its operation on top of the first's, which it reads from the shared pool.
        for (const nonce of [1n, 2n]) hashes.push(await send(instances[(index + Number(nonce)) % 2]!, client, account, nonce));
      }),
    );
    expect(new Set(hashes).size).toBe(12);

    for (const hash of hashes) {
      for (const instance of instances) {
        await expect.poll(() => call(instance, "eth_getUserOperationReceipt", [hash]), { timeout: 30_000, interval: 200 }).toMatchObject({ success: true });
      }
    }
    const events = await eventsOnChain(client, entryPoint);
    expect(hashes.map((hash) => events.get(hash))).toEqual(hashes.map(() => 1));
    expect(events.size).toBe(12);

    // The password is in the URL each instance was given, and nowhere in what they show.
    for (const instance of instances) {
      expect(JSON.stringify(await call(instance, "bundler_config"))).not.toContain(password);
      expect(instance.tail().join("\n")).not.toContain(password);
      expect(instance.tail()).toContain(`  database:    ${printed}`);
    }
  });

  it("when one instance is killed, the other takes over its submitted operations once their lease lapses", { timeout: 180_000 }, async () => {
    const { url: database } = await freshDatabase();
    const { devnet, client } = await devnetWithRelayers(4);
    const [account] = await fundedAccounts(devnet, client, 1);
    // The shortest lease the service takes: the survivor adopts once it lapses, and the test waits for that, not for a set time.
    const first = await startInstance(devnet, database, devnet.relayerKeys.slice(0, 2), "instance-a", { BUNDLEKIT_BUNDLE_CLAIM_LEASE_MS: "1000" });

    // Blocks only on demand: the bundle stays pending in the node while its sender dies.
    await client.request({ method: "evm_setAutomine", params: [false] } as never);
    const hash = await send(first, client, account!, 0n);
    await expect.poll(async () => (await client.request({ method: "txpool_status" } as never)) as { pending: Hex }, { timeout: 30_000, interval: 100 }).toMatchObject({ pending: "0x1" });
    await first.kill();

    const second = await startInstance(devnet, database, devnet.relayerKeys.slice(2, 4), "instance-b");
    await client.request({ method: "evm_mine" } as never);
    // Served from the chain at once, before the survivor adopts it.
    await expect.poll(() => call(second, "eth_getUserOperationReceipt", [hash]), { timeout: 30_000, interval: 200 }).toMatchObject({ success: true });
    // Once the lease lapses the survivor adopts it and its store counts it included: no longer in flight anywhere.
    const metrics = () => fetch(new URL("/metrics", second.url)).then((r) => r.text());
    await expect.poll(metrics, { timeout: 30_000, interval: 200 }).toMatch(/bundlekit_user_operations\{status="included"\} 1\n/);
    expect(await metrics()).toMatch(/bundlekit_user_operations\{status="submitted"\} 0\n/);
    expect((await eventsOnChain(client, account!.entryPoint.address)).get(hash)).toBe(1);
  });
});
