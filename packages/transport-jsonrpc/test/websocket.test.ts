import { type BundleProposal, encodeUserOperation, getUserOperationHash } from "@bundlekit/core";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket as WsClient } from "ws";
import { maxBodyBytes, serverFixture } from "./fixture.ts";
import { openRpcSocket, type RpcSocket } from "./rpc-socket.ts";

describe("JSON-RPC over WebSocket", () => {
  let fixture: Awaited<ReturnType<typeof serverFixture>>;
  let socket: RpcSocket;
  let id = 0;

  beforeAll(async () => {
    fixture = await serverFixture();
    socket = await openRpcSocket(fixture.server.webSocketUrl);
  });
  afterAll(async () => {
    await socket?.close();
    await fixture?.stop();
  });

  const request = (method: string, params?: unknown[], on = socket) =>
    on.request({ jsonrpc: "2.0", id: ++id, method, params });

  it("serves the same methods as HTTP on the same port and path", async () => {
    expect(new URL(fixture.server.webSocketUrl).host).toBe(new URL(fixture.server.url).host);
    expect(new URL(fixture.server.webSocketUrl).pathname).toBe(
      new URL(fixture.server.url).pathname,
    );
    const answer = await request("eth_supportedEntryPoints");
    expect(answer.result).toEqual(fixture.bundler.entryPoints.all.map((ep) => ep.address));
    expect((await request("web3_clientVersion")).result).toMatch(/^bundlekit\//);
  });

  it("answers a batch in order", async () => {
    const answer = await socket.request([
      { jsonrpc: "2.0", id: "a", method: "eth_chainId" },
      { jsonrpc: "2.0", id: "b", method: "no_suchMethod" },
      { jsonrpc: "2.0", method: "eth_chainId" },
      {
        jsonrpc: "2.0",
        id: "c",
        method: "eth_getUserOperationReceipt",
        params: [`0x${"11".repeat(32)}`],
      },
    ]);
    expect(answer).toEqual([
      { jsonrpc: "2.0", id: "a", result: `0x${fixture.devnet.chainId.toString(16)}` },
      expect.objectContaining({ id: "b", error: expect.objectContaining({ code: -32601 }) }),
      { jsonrpc: "2.0", id: "c", result: null },
    ]);
  });

  it("answers a malformed frame with -32700 and keeps the connection open", async () => {
    for (const garbage of ["{not json", new Uint8Array([0xff, 0xfe, 0x7b, 0x00])]) {
      socket.sendRaw(garbage);
      const answer = await socket.answer(null);
      expect(answer).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
      expect(answer.error?.message).toMatch(/^parse error: /);
      expect((await request("eth_chainId")).result).toBe(
        `0x${fixture.devnet.chainId.toString(16)}`,
      );
    }
  });

  it("answers a text frame of invalid UTF-8 with -32700 instead of closing", async () => {
    // Browsers and Node's WebSocket never send such a frame; ws can.
    const raw = new WsClient(fixture.server.webSocketUrl);
    await new Promise((resolve) => raw.once("open", resolve));
    const replies: unknown[] = [];
    raw.on("message", (data) => replies.push(JSON.parse(String(data))));
    raw.send(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), { binary: false });
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }));
    await expect.poll(() => replies.length).toBe(2);
    expect(replies[0]).toMatchObject({ id: null, error: { code: -32700 } });
    expect(replies[1]).toMatchObject({ id: 1, result: `0x${fixture.devnet.chainId.toString(16)}` });
    raw.close();
  });

  it("rejects bad subscription requests with -32602 naming the field", async () => {
    const kind = await request("eth_subscribe", ["newHeads"]);
    expect(kind.error).toMatchObject({ code: -32602, data: { field: "params[0]" } });
    expect(kind.error?.message).toContain("userOperationStatus");
    const field = await request("eth_subscribe", [
      "userOperationStatus",
      { sender: `0x${"22".repeat(20)}` },
    ]);
    expect(field.error).toMatchObject({ code: -32602, data: { field: "params[1].sender" } });
    const hash = await request("eth_subscribe", [
      "userOperationStatus",
      { userOpHash: ["0x1234"] },
    ]);
    expect(hash.error).toMatchObject({ code: -32602, data: { field: "params[1].userOpHash[0]" } });
    expect((await request("eth_unsubscribe", [])).error).toMatchObject({ code: -32602 });
    expect((await request("eth_unsubscribe", ["0xabc"])).result).toBe(false);
  });

  it("limits subscriptions per connection", async () => {
    const own = await openRpcSocket(fixture.server.webSocketUrl);
    try {
      for (let i = 0; i < 3; i++)
        expect((await request("eth_subscribe", ["userOperationStatus"], own)).result).toMatch(
          /^0x[0-9a-f]{32}$/,
        );
      const over = await request("eth_subscribe", ["userOperationStatus"], own);
      expect(over.error).toMatchObject({ code: -32600, data: { limit: 3 } });
    } finally {
      await own.close();
    }
  });

  it("closes the connection with 1009 for a message over the size limit", async () => {
    const own = await openRpcSocket(fixture.server.webSocketUrl);
    own.sendRaw(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_chainId",
        params: ["x".repeat(maxBodyBytes)],
      }),
    );
    expect(await own.closed).toBe(1009);
  });

  it("refuses an upgrade on another path", async () => {
    await expect(
      openRpcSocket(new URL("/elsewhere", fixture.server.webSocketUrl).href),
    ).rejects.toThrow(/cannot connect/);
  });

  it("follows an operation through pending, submitted and included", async () => {
    const account = await fixture.makeAccount("0.7");
    const op = await fixture.makeOperation(fixture.bundler, account, {
      to: `0x${"33".repeat(20)}`,
      value: 1n,
    });
    const entryPoint = fixture.bundler.entryPoints.get(account.entryPoint.address);
    const userOpHash = getUserOperationHash(op, entryPoint, fixture.devnet.chainId);

    const mine = (await request("eth_subscribe", ["userOperationStatus", { userOpHash }]))
      .result as Hex;
    const other = (
      await request("eth_subscribe", [
        "userOperationStatus",
        { userOpHash: [`0x${"44".repeat(32)}`] },
      ])
    ).result as Hex;
    const all = (await request("eth_subscribe", ["userOperationStatus"])).result as Hex;

    expect(
      (await request("eth_sendUserOperation", [encodeUserOperation(op), entryPoint.address]))
        .result,
    ).toBe(userOpHash);
    const [transactionHash] = await fixture.bundler.sendBundleNow();

    const pending = await socket.notification(mine);
    expect(pending).toEqual({
      jsonrpc: "2.0",
      method: "eth_subscription",
      params: { subscription: mine, result: { userOpHash, status: "pending" } },
    });
    expect((await socket.notification(mine)).params.result).toEqual({
      userOpHash,
      status: "submitted",
      transactionHash,
    });
    expect((await socket.notification(mine)).params.result).toEqual({
      userOpHash,
      status: "included",
      transactionHash,
      success: true,
    });
    for (const status of ["pending", "submitted", "included"])
      expect((await socket.notification(all)).params.result.status).toBe(status);
    expect(socket.unread(other)).toEqual([]);
    await request("eth_unsubscribe", [other]);
    await request("eth_unsubscribe", [all]);
    await request("eth_unsubscribe", [mine]);
  });

  /**
   * In pull mode, an operation sent over the socket with a subscription to it, proposed for the
   * next block and committed by a sequencer; `check` then reads its notifications. The engine
   * goes back to manual mode and the subscription ends afterwards.
   */
  async function committedInPullMode(
    to: Hex,
    check: (committed: { userOpHash: Hex; mine: Hex; entryPoint: Hex; blockNumber: bigint; proposal: BundleProposal }) => Promise<void>,
  ) {
    const account = await fixture.makeAccount("0.8");
    const op = await fixture.makeOperation(fixture.bundler, account, { to, value: 1n });
    const entryPoint = fixture.bundler.entryPoints.get(account.entryPoint.address);
    const userOpHash = getUserOperationHash(op, entryPoint, fixture.devnet.chainId);
    const mine = (await request("eth_subscribe", ["userOperationStatus", { userOpHash }])).result as Hex;
    await request("eth_sendUserOperation", [encodeUserOperation(op), entryPoint.address]);
    fixture.bundler.setBundlingMode("pull");
    try {
      const sequencer = privateKeyToAccount(fixture.devnet.accountKeys[10]!);
      const latest = await fixture.client.getBlock();
      const blockNumber = latest.number + 1n;
      const proposal = await fixture.bundler.proposeBundle({
        gasBudget: 10_000_000n,
        baseFee: latest.baseFeePerGas!,
        blockNumber,
        timestamp: latest.timestamp + 1n,
        from: sequencer.address,
        signer: sequencer,
      });
      await fixture.bundler.commitBundle(proposal!.id);
      expect((await socket.notification(mine)).params.result.status).toBe("pending");
      await check({ userOpHash, mine, entryPoint: entryPoint.address, blockNumber, proposal: proposal! });
    } finally {
      fixture.bundler.setBundlingMode("manual");
      await request("eth_unsubscribe", [mine]);
    }
  }

  it("reports an operation a sequencer committed to as preconfirmed, with the promised block, in pull mode", () =>
    committedInPullMode(`0x${"33".repeat(20)}`, async ({ userOpHash, mine, entryPoint, blockNumber, proposal }) => {
      expect((await socket.notification(mine)).params.result).toEqual({
        userOpHash,
        status: "preconfirmed",
        transactionHash: proposal.transactionHash,
        blockNumber: `0x${blockNumber.toString(16)}`,
        // Unsigned: this engine holds no preconfirmation key.
        preconfirmation: {
          userOpHash,
          entryPoint,
          chainId: `0x${fixture.devnet.chainId.toString(16)}`,
          blockNumber: `0x${blockNumber.toString(16)}`,
          transactionHash: proposal.transactionHash,
          signer: "0x0000000000000000000000000000000000000000",
          signature: null,
          status: "promised",
        },
      });
      await fixture.client.sendRawTransaction({ serializedTransaction: proposal.signedTransaction! });
      await fixture.bundler.sendBundleNow();
      expect((await socket.notification(mine)).params.result).toMatchObject({ status: "included", transactionHash: proposal.transactionHash });
    }));

  it("reports a preconfirmation whose block passed without the operation as preconfirmation_broken, with the reason, then pending", () =>
    committedInPullMode(`0x${"44".repeat(20)}`, async ({ userOpHash, mine, blockNumber, proposal }) => {
      // The sequencer never sends the transaction it committed.
      await fixture.client.request({ method: "evm_mine" as never });
      await fixture.bundler.sendBundleNow(); // drives the tracker past the promised block
      expect((await socket.notification(mine)).params.result.status).toBe("preconfirmed");
      const reason = `the promised block ${blockNumber} passed without it`;
      expect((await socket.notification(mine)).params.result).toMatchObject({
        status: "preconfirmation_broken",
        transactionHash: proposal.transactionHash,
        blockNumber: `0x${blockNumber.toString(16)}`,
        reason,
        preconfirmation: { status: "broken", reason, transactionHash: proposal.transactionHash },
      });
      expect((await socket.notification(mine)).params.result.status).toBe("pending");
      const lookup = (await request("eth_getUserOperationByHash", [userOpHash])).result;
      expect(lookup).toMatchObject({ transactionHash: null, blockNumber: null, preconfirmation: { status: "broken", reason } });
      // Back in the pool, it lands in a later bundle (and leaves nothing behind for other tests).
      fixture.bundler.setBundlingMode("manual");
      const [transactionHash] = await fixture.bundler.sendBundleNow();
      expect((await socket.notification(mine)).params.result).toMatchObject({ status: "submitted", transactionHash });
      expect((await socket.notification(mine)).params.result).toMatchObject({ status: "included", transactionHash });
    }));

  it("reports a replaced operation as dropped", async () => {
    const account = await fixture.makeAccount("0.8");
    const first = await fixture.makeOperation(fixture.bundler, account, {
      to: `0x${"55".repeat(20)}`,
      value: 1n,
    });
    const entryPoint = fixture.bundler.entryPoints.get(account.entryPoint.address);
    const firstHash = await fixture.bundler.sendUserOperation(first, entryPoint.address);
    const bump = (fee: bigint) => (fee * 12n) / 10n;
    const second = await fixture.makeOperation(
      fixture.bundler,
      account,
      { to: `0x${"55".repeat(20)}`, value: 1n },
      {
        nonce: first.nonce,
        maxFeePerGas: bump(first.maxFeePerGas),
        maxPriorityFeePerGas: bump(first.maxPriorityFeePerGas),
      },
    );
    const secondHash = getUserOperationHash(second, entryPoint, fixture.devnet.chainId);
    const subscription = (
      await request("eth_subscribe", [
        "userOperationStatus",
        { userOpHash: [firstHash, secondHash] },
      ])
    ).result as Hex;

    expect(
      (await request("eth_sendUserOperation", [encodeUserOperation(second), entryPoint.address]))
        .result,
    ).toBe(secondHash);
    expect((await socket.notification(subscription)).params.result).toEqual({
      userOpHash: firstHash,
      status: "dropped",
      reason: `replaced by ${secondHash}`,
    });
    expect((await socket.notification(subscription)).params.result).toEqual({
      userOpHash: secondHash,
      status: "pending",
    });
    await fixture.bundler.sendBundleNow();
    expect((await socket.notification(subscription)).params.result.status).toBe("submitted");
    expect((await socket.notification(subscription)).params.result).toMatchObject({
      userOpHash: secondHash,
      status: "included",
      success: true,
    });
    await request("eth_unsubscribe", [subscription]);
  });

  it("stops notifying after eth_unsubscribe", async () => {
    const stopped = (await request("eth_subscribe", ["userOperationStatus"])).result as Hex;
    const kept = (await request("eth_subscribe", ["userOperationStatus"])).result as Hex;
    expect((await request("eth_unsubscribe", [stopped])).result).toBe(true);
    expect((await request("eth_unsubscribe", [stopped])).result).toBe(false);

    const account = await fixture.makeAccount("0.6");
    const op = await fixture.makeOperation(fixture.bundler, account, {
      to: `0x${"66".repeat(20)}`,
      value: 1n,
    });
    const userOpHash = await fixture.bundler.sendUserOperation(op, account.entryPoint.address);
    // Both would be notified in subscription order: once `kept` has its notification, `stopped` would have had its own.
    expect((await socket.notification(kept)).params.result).toEqual({
      userOpHash,
      status: "pending",
    });
    expect(socket.unread(stopped)).toEqual([]);
    await request("eth_unsubscribe", [kept]);
    await fixture.bundler.sendBundleNow();
  });

  it("ends a connection's subscriptions when it closes", async () => {
    let listeners = 0;
    const { bundler } = fixture;
    const counted = {
      ...bundler,
      onStatusChange(listener: Parameters<typeof bundler.onStatusChange>[0]) {
        listeners++;
        const stop = bundler.onStatusChange(listener);
        return () => {
          listeners--;
          return stop();
        };
      },
    };
    const { startJsonRpcServer } = await import("../src/server.ts");
    const server = await startJsonRpcServer({ bundler: counted, metrics: fixture.metrics });
    try {
      const own = await openRpcSocket(server.webSocketUrl);
      await own.request({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_subscribe",
        params: ["userOperationStatus"],
      });
      await own.request({
        jsonrpc: "2.0",
        id: 2,
        method: "eth_subscribe",
        params: ["userOperationStatus", { userOpHash: `0x${"77".repeat(32)}` }],
      });
      expect(listeners).toBe(2);
      expect(
        (await fixture.metrics.registry.getSingleMetricAsString("bundlekit_subscriptions"))
          .trim()
          .split("\n")
          .at(-1),
      ).toBe("bundlekit_subscriptions 2");
      await own.close();
      await expect.poll(() => listeners).toBe(0);
      expect(
        (await fixture.metrics.registry.getSingleMetricAsString("bundlekit_subscriptions"))
          .trim()
          .split("\n")
          .at(-1),
      ).toBe("bundlekit_subscriptions 0");
    } finally {
      await server.close();
    }
  });
});
