// A team's own service, outside the Bundlekit repository, as plain ESM JavaScript: it embeds the
// engine with a SQLite mempool, mounts it in Express behind express.json(), and sends one user
// operation with viem's bundler client to inclusion on the devnet. `pnpm check:consumer` runs it
// from the packed tarballs on Node 22 and Node 24, without flags.
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBundler } from "@bundlekit/core";
import { startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { createSqliteMempoolStore } from "@bundlekit/storage-kysely";
import { createJsonRpcExpress } from "@bundlekit/transport-jsonrpc";
import express from "express";
import { createPublicClient, createWalletClient, http, parseEther } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const devnet = await startDevnet();
const directory = mkdtempSync(join(tmpdir(), "consumer-"));
const client = createPublicClient({
  chain: devnet.chain,
  transport: http(devnet.rpcUrl),
  pollingInterval: 100,
});
const store = await createSqliteMempoolStore({ filename: join(directory, "mempool.sqlite") });
const bundler = await createBundler({
  client,
  store,
  signer: createLocalKeySigner(devnet.relayerKeys),
  settings: { bundling: { intervalMs: 200 } },
});
bundler.start();

const rpc = createJsonRpcExpress({ bundler, basePath: "/bundler" });
const app = express();
app.use(express.json());
app.get("/health", (_request, response) => response.json({ app: "ok" }));
app.use("/bundler", rpc.middleware);
const server = app.listen(0, "127.0.0.1");
await once(server, "listening");
rpc.attach(server);

try {
  const [funderKey] = devnet.accountKeys;
  if (funderKey === undefined) throw new Error("the devnet has no funded account keys");
  const account = await toSimpleAccount({
    client,
    owner: privateKeyToAccount(generatePrivateKey()),
    version: "0.7",
  });
  const funder = createWalletClient({
    chain: devnet.chain,
    transport: http(devnet.rpcUrl),
    account: privateKeyToAccount(funderKey),
  });
  await client.waitForTransactionReceipt({
    hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }),
  });

  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  const bundlerClient = createBundlerClient({
    account,
    client,
    transport: http(`http://127.0.0.1:${port}/bundler`),
    pollingInterval: 100,
  });
  const hash = await bundlerClient.sendUserOperation({
    calls: [{ to: funder.account.address, value: parseEther("0.1") }],
  });
  const receipt = await bundlerClient.waitForUserOperationReceipt({ hash, timeout: 60_000 });
  if (!receipt.success) throw new Error(`the user operation ${hash} was included but reverted`);
  console.log(
    JSON.stringify({
      node: process.version,
      included: hash,
      block: receipt.receipt.blockNumber.toString(),
    }),
  );
} finally {
  await rpc.close();
  server.closeAllConnections();
  server.close();
  await bundler.stop();
  await store.close();
  await devnet.stop();
  rmSync(directory, { recursive: true, force: true });
}
