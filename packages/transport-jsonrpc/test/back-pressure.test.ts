import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { JsonRpcServer } from "../src/server.ts";
import { connections, heldMethod, rawRequest, startStubServer } from "./stub-server.ts";

const json = { "content-type": "application/json" };
const chainId = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" });

/** `count` JSON-RPC requests for `method` as pipelined HTTP/1.1 requests in one write. */
function pipelined(method: string, count: number): string {
  return Array.from({ length: count }, (_, id) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id, method });
    return `POST /rpc HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  }).join("");
}

/** The server's end of the next connection it accepts. */
const acceptedSocket = (server: JsonRpcServer) =>
  new Promise<Socket>((resolve) => server.server.once("connection", resolve));

/** A method whose answer is `bytes` long: replies that fill a client's buffers quickly. */
const big = (bytes: number) => async () => "x".repeat(bytes);

describe("back-pressure per connection", () => {
  it("holds back pipelined HTTP requests past maxInFlightRequests, and serves other clients meanwhile", async () => {
    const held = heldMethod();
    const server = await startStubServer({ maxInFlightRequests: 4 }, { test_held: held.method });
    const accepted = acceptedSocket(server);
    const socket = connect({ port: server.port, host: "127.0.0.1" });
    try {
      let received = "";
      socket.on("data", (data) => {
        received += data;
      });
      socket.write(pipelined("test_held", 200));
      await expect.poll(() => held.seen.running).toBe(4);
      // The server stops reading the connection while it is at its limit.
      expect((await accepted).isPaused()).toBe(true);
      const other = await rawRequest(server.url, { headers: json, body: chainId });
      expect(other).toMatchObject({ status: 200, body: { result: "0x7a69" } });
      expect(held.seen.calls).toBe(4);

      held.release();
      await expect.poll(() => received.match(/HTTP\/1\.1 200 OK/g)?.length ?? 0).toBe(200);
      expect(held.seen).toEqual({ calls: 200, running: 0, mostRunning: 4 });
    } finally {
      held.release();
      socket.destroy();
      await server.close();
    }
  });

  it("holds back WebSocket messages past maxInFlightRequests", async () => {
    const held = heldMethod();
    const server = await startStubServer({ maxInFlightRequests: 3 }, { test_held: held.method });
    const accepted = acceptedSocket(server);
    const client = new WebSocket(server.webSocketUrl);
    try {
      await new Promise((resolve) => client.once("open", resolve));
      let answers = 0;
      client.on("message", () => answers++);
      for (let id = 0; id < 100; id++)
        client.send(JSON.stringify({ jsonrpc: "2.0", id, method: "test_held" }));
      await expect.poll(() => held.seen.running).toBe(3);
      expect(held.seen.calls).toBe(3);
      expect((await accepted).isPaused()).toBe(true);

      held.release();
      await expect.poll(() => answers).toBe(100);
      expect(held.seen).toEqual({ calls: 100, running: 0, mostRunning: 3 });
    } finally {
      held.release();
      client.terminate();
      await server.close();
    }
  });

  it("disconnects an HTTP client that stops reading once its unsent answers pass maxUnsentBytes", async () => {
    const server = await startStubServer(
      { maxUnsentBytes: 64 * 1024, maxInFlightRequests: 100 },
      { test_big: big(2 * 1024 * 1024) },
    );
    const socket = connect({ port: server.port, host: "127.0.0.1" });
    try {
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.pause();
      // 60 MB of answers: more than the kernel's buffers on both ends hold.
      socket.write(pipelined("test_big", 30));
      await expect.poll(() => connections(server)).toBe(0);
    } finally {
      socket.destroy();
      await server.close();
    }
  });

  it("disconnects a WebSocket client that stops reading once its unsent answers pass maxUnsentBytes", async () => {
    const server = await startStubServer(
      { maxUnsentBytes: 64 * 1024 },
      { test_big: big(2 * 1024 * 1024) },
    );
    const client = new WebSocket(server.webSocketUrl);
    try {
      await new Promise((resolve) => client.once("open", resolve));
      client.pause();
      for (let id = 0; id < 30; id++)
        client.send(JSON.stringify({ jsonrpc: "2.0", id, method: "test_big" }));
      await expect.poll(() => connections(server)).toBe(0);
    } finally {
      client.terminate();
      await server.close();
    }
  });

  it("closes a WebSocket idle past webSocketIdleTimeoutMs with code 1000", async () => {
    const server = await startStubServer({ webSocketIdleTimeoutMs: 50 });
    const client = new WebSocket(server.webSocketUrl);
    try {
      const closed = new Promise<[number, string]>((resolve) =>
        client.once("close", (code, reason) => resolve([code, String(reason)])),
      );
      expect(await closed).toEqual([1000, "idle for 50 ms"]);
    } finally {
      client.terminate();
      await server.close();
    }
  });

  it("keeps an idle WebSocket that holds a subscription", async () => {
    const server = await startStubServer({
      webSocketIdleTimeoutMs: 20,
      // Pings far apart compared with the idle timeout: a busy machine's late pong must not cut the peer off.
      webSocketPingIntervalMs: 200,
    });
    const client = new WebSocket(server.webSocketUrl);
    try {
      await new Promise((resolve) => client.once("open", resolve));
      const answered = new Promise((resolve) => client.once("message", resolve));
      client.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_subscribe",
          params: ["userOperationStatus"],
        }),
      );
      await answered;
      // Several pings, so many idle periods, pass: the connection stays open.
      let pings = 0;
      client.on("ping", () => pings++);
      await expect.poll(() => pings).toBeGreaterThanOrEqual(4);
      expect(client.readyState).toBe(WebSocket.OPEN);
    } finally {
      client.terminate();
      await server.close();
    }
  });

  it("cuts off a WebSocket peer that does not answer pings, and keeps one that does", async () => {
    const server = await startStubServer({
      // Wide enough that a busy machine's pong is never late: only the silent peer misses one.
      webSocketPingIntervalMs: 200,
      webSocketIdleTimeoutMs: 0,
    });
    const silent = new WebSocket(server.webSocketUrl, { autoPong: false });
    const live = new WebSocket(server.webSocketUrl);
    try {
      const code = await new Promise<number>((resolve) => silent.once("close", resolve));
      expect(code).toBe(1006);
      let pings = 0;
      live.on("ping", () => pings++);
      await expect.poll(() => pings).toBeGreaterThanOrEqual(3);
      expect(live.readyState).toBe(WebSocket.OPEN);
    } finally {
      silent.terminate();
      live.terminate();
      await server.close();
    }
  });
});
