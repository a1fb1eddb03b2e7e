import { once } from "node:events";
import type { Server } from "node:http";
import express from "express";
import { http } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineFixture } from "../../core/test/fixtures.ts";
import { createJsonRpcExpress } from "../src/adapters/express.ts";
import { mountPath, origin } from "./mounted-endpoint.ts";

/** The real engine mounted in Express behind express.json(), driven by viem's bundler client. */
describe("Express-mounted engine on the devnet", () => {
  let chain: Awaited<ReturnType<typeof engineFixture>>;
  let bundler: Awaited<ReturnType<typeof chain.makeBundler>>["bundler"];
  let server: Server;
  let rpc: ReturnType<typeof createJsonRpcExpress>;

  beforeAll(async () => {
    chain = await engineFixture();
    ({ bundler } = await chain.makeBundler());
    rpc = createJsonRpcExpress({ bundler, basePath: mountPath });
    const app = express();
    app.use(express.json());
    app.use(mountPath, rpc.middleware);
    server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    rpc.attach(server);
  });
  afterAll(async () => {
    await rpc?.close();
    server?.closeAllConnections();
    server?.close();
    await chain?.devnet.stop();
  });

  it("takes a user operation from viem's bundler client through to inclusion", async () => {
    const account = await chain.makeAccount("0.7");
    const bundlerClient = createBundlerClient({
      account,
      client: chain.client,
      transport: http(`${origin(server)}${mountPath}`),
      pollingInterval: 50,
    });
    const userOpHash = await bundlerClient.sendUserOperation({
      calls: [{ to: account.address, value: 0n }],
    });
    const [transactionHash] = await bundler.sendBundleNow();
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash: userOpHash });
    expect(receipt).toMatchObject({ userOpHash, success: true, sender: account.address });
    expect(receipt.receipt.transactionHash).toBe(transactionHash);
  });
});
