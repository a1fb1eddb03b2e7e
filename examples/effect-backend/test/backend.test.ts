import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Devnet, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { Bundler, Chain, Relayers } from "@bundlekit/effect";
import { createLocalKeySigner } from "@bundlekit/signer-relayer";
import { sqliteStores } from "@bundlekit/storage-kysely/effect";
import { Effect, Layer } from "effect";
import { HttpServer } from "effect/http";
import { createPublicClient, createWalletClient, http, type PublicClient, parseEther } from "viem";
import { createBundlerClient, formatUserOperationRequest, type UserOperation } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRpcSocket } from "../../../packages/transport-jsonrpc/test/rpc-socket.ts";
import { upgradeStatus } from "../../../packages/transport-jsonrpc/test/stub-server.ts";
import { backendLayer, bundlerPath } from "../src/backend.ts";

/** An Effect HTTP backend with routes of its own, the bundler's endpoint mounted, and a route on the Bundler service. */
describe("examples/effect-backend", () => {
  let devnet: Devnet;
  let client: PublicClient;
  let directory: string;
  beforeAll(async () => {
    devnet = await startDevnet();
    client = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), pollingInterval: 50 }) as PublicClient;
    directory = await mkdtemp(join(tmpdir(), "bundlekit-effect-backend-"));
  });
  afterAll(async () => {
    await devnet?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  /** Run `test` with the backend up on a free port (its stores in a new SQLite file), given its origin; the scope closes the backend after. */
  function withBackend<A>(test: (origin: string) => Promise<A>): Promise<A> {
    const ports = Layer.mergeAll(
      Layer.succeed(Chain, client),
      Layer.succeed(Relayers, createLocalKeySigner(devnet.relayerKeys)),
      sqliteStores(join(directory, "backend.sqlite")),
    );
    const backend = backendLayer().pipe(Layer.provide(Bundler.layer({ bundling: { intervalMs: 100 } })), Layer.provide(ports));
    const program = HttpServer.addressFormattedWith((origin) => Effect.promise(() => test(origin)));
    return Effect.runPromise(Effect.scoped(program.pipe(Effect.provide(backend))));
  }

  it("serves its own route, the bundler's JSON-RPC endpoint, and an operation's status through the Bundler service", async () => {
    let served = "";
    await withBackend(async (origin) => {
      served = origin;
      expect(await (await fetch(`${origin}/hello`)).json()).toEqual({ hello: "world" });

      // A user operation from viem's bundler client, through the mounted endpoint.
      const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version: "0.7" });
      const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
      await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }) });
      const bundler = createBundlerClient({ account, client, transport: http(`${origin}${bundlerPath}`), pollingInterval: 100 });
      const hash = await bundler.sendUserOperation({ calls: [{ to: account.address, value: 0n }] });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt.success).toBe(true);

      // The backend's own route, answered by the Bundler service directly.
      const status = await fetch(`${origin}/operations/${hash}`);
      expect(await status.json()).toEqual({ hash, status: "included", transactionHash: receipt.receipt.transactionHash });
      expect((await fetch(`${origin}/operations/0x${"ab".repeat(32)}`)).status).toBe(404);
      expect((await fetch(`${origin}/operations/nope`)).status).toBe(400);

      // The transport's checks and limits hold on the mounted endpoint.
      const post = (body: string) => fetch(`${origin}${bundlerPath}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      const notJson = await post("{");
      expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
      const tooLarge = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: ["x".repeat(2 * 1024 * 1024)] }));
      expect(tooLarge.status).toBe(413);
      expect(await (await fetch(`${origin}${bundlerPath}/health`)).json()).toEqual({ status: "ok" });
    });
    // The scope closed: the server no longer accepts.
    await expect(fetch(`${served}/hello`)).rejects.toThrow();
  });

  it("serves the ERC-4337 methods through its HttpApi group, decoding and encoding the JSON-RPC bodies with the package's schemas", async () => {
    await withBackend(async (origin) => {
      const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version: "0.7" });
      const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-2)!) });
      await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }) });
      const bundler = createBundlerClient({ account, client, transport: http(`${origin}${bundlerPath}`), pollingInterval: 100 });
      const { account: _, ...prepared }: UserOperation<"0.7"> & { account?: unknown } = await bundler.prepareUserOperation({ calls: [{ to: account.address, value: 0n }] });
      const userOperation = { ...prepared, signature: await account.signUserOperation(prepared) };
      const entryPoint = account.entryPoint.address;
      const call = async (method: string, params?: unknown[], id = 1) => {
        const answer = await fetch(`${origin}/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }) });
        return { status: answer.status, body: (await answer.json()) as { id: unknown; result?: unknown; error?: { code: number; message: string } } };
      };

      expect(await call("eth_chainId")).toEqual({ status: 200, body: { jsonrpc: "2.0", id: 1, result: `0x${devnet.chain.id.toString(16)}` } });
      expect((await call("eth_supportedEntryPoints", [])).body.result).toContain(entryPoint);
      const estimate = await call("eth_estimateUserOperationGas", [formatUserOperationRequest(userOperation), entryPoint]);
      expect(estimate.status).toBe(200);
      expect(estimate.body.result).toMatchObject({ callGasLimit: expect.stringMatching(/^0x[0-9a-f]+$/), verificationGasLimit: expect.stringMatching(/^0x/), preVerificationGas: expect.stringMatching(/^0x/) });

      const sent = await call("eth_sendUserOperation", [formatUserOperationRequest(userOperation), entryPoint], 7);
      expect(sent.status).toBe(200);
      expect(sent.body.id).toBe(7);
      const hash = sent.body.result as `0x${string}`;
      expect((await call("eth_getUserOperationByHash", [hash])).body.result).toMatchObject({ entryPoint, userOperation: { sender: account.address } });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      expect(receipt.success).toBe(true);
      expect((await call("eth_getUserOperationReceipt", [hash])).body.result).toMatchObject({ userOpHash: hash, success: true, receipt: { transactionHash: receipt.receipt.transactionHash } });
      expect((await call("eth_getUserOperationReceipt", [`0x${"ab".repeat(32)}`])).body.result).toBeNull();

      // The same operation again: the engine's refusal as a JSON-RPC error answer with its ERC-7769 code.
      const again = await call("eth_sendUserOperation", [formatUserOperationRequest(userOperation), entryPoint], 8);
      expect(again.status).toBe(400);
      expect(again.body).toMatchObject({ jsonrpc: "2.0", id: 8, error: { code: -32602 } });
      expect(again.body.error?.message).toMatch(/already/i);

      // A body the schemas refuse never reaches the engine; the answer names the field.
      const { nonce: __, ...noNonce } = formatUserOperationRequest(userOperation);
      const bad = await call("eth_sendUserOperation", [noNonce, entryPoint], 9);
      expect(bad).toEqual({ status: 400, body: { jsonrpc: "2.0", id: null, error: { code: -32602, message: "invalid params[0].nonce: is required" } } });
      const badHash = await call("eth_getUserOperationByHash", ["0x12"]);
      expect(badHash.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("params[0]") });
    });
  });

  it("serves the JSON-RPC endpoint over WebSocket: a client subscribes to userOperationStatus and sees its operation's status change", async () => {
    let closed: Promise<number> | undefined;
    await withBackend(async (origin) => {
      const url = `${origin.replace("http", "ws")}${bundlerPath}`;
      const socket = await openRpcSocket(url);
      closed = socket.closed;
      expect(await socket.request({ jsonrpc: "2.0", id: 1, method: "eth_chainId" })).toMatchObject({ result: `0x${devnet.chain.id.toString(16)}` });
      const { result: subscription } = await socket.request({ jsonrpc: "2.0", id: 2, method: "eth_subscribe", params: ["userOperationStatus"] });
      expect(subscription).toMatch(/^0x[0-9a-f]{32}$/);

      const account = await toSimpleAccount({ client, owner: privateKeyToAccount(generatePrivateKey()), version: "0.7" });
      const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-3)!) });
      await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1") }) });
      const bundler = createBundlerClient({ account, client, transport: http(url.replace("ws", "http")), pollingInterval: 100 });
      const hash = await bundler.sendUserOperation({ calls: [{ to: account.address, value: 0n }] });
      const notification = await socket.notification(String(subscription));
      expect(notification.params.result).toMatchObject({ userOpHash: hash, status: "pending" });

      // The transport's checks hold on the upgrade: a browser origin not allowed gets 403 and no socket.
      expect(await upgradeStatus(url, {}, "https://evil.example")).toBe(403);
      // A message over the body limit closes the connection with 1009.
      const large = await openRpcSocket(url);
      large.sendRaw(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "eth_chainId", params: ["x".repeat(2 * 1024 * 1024)] }));
      expect(await large.closed).toBe(1009);
    });
    // The scope closed: the server closed the connection as going away.
    expect(await closed).toBe(1001);
  });
});
