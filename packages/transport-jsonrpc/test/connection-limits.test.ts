import { Agent, request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { clientAddress } from "../src/connection-limits.ts";
import type { JsonRpcServer } from "../src/server.ts";
import { connections, rawRequest, startStubServer, upgradeStatus } from "./stub-server.ts";

const chainId = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" });
const json = { "content-type": "application/json" };

/** Open a TCP connection and resolve once the server counts it. */
async function openSocket(server: JsonRpcServer): Promise<Socket> {
  const before = await connections(server);
  const socket = connect({ port: server.port, host: "127.0.0.1" });
  await new Promise((resolve) => socket.once("connect", resolve));
  await expect.poll(() => connections(server)).toBe(before + 1);
  return socket;
}

/** POST `body` through `agent` (a kept-alive connection). */
function postVia(agent: Agent, url: string, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpRequest(url, { method: "POST", headers: json, agent }, (response) => {
      let text = "";
      response.on("data", (chunk) => {
        text += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode!, text }));
    });
    request.on("error", reject);
    request.end(body);
  });
}

describe("connection limits", () => {
  it("refuses the connection past maxConnections as busy (429, Retry-After), over HTTP and WebSocket, while open ones are served", async () => {
    const server = await startStubServer({ maxConnections: 3, maxConnectionsPerIp: 100 });
    server.server.keepAliveTimeout = 60_000;
    const client = new Agent({ keepAlive: true, maxSockets: 1 });
    const flood: Socket[] = [];
    try {
      expect((await postVia(client, server.url, chainId)).status).toBe(200);
      await expect.poll(() => connections(server)).toBe(1);
      for (let i = 0; i < 2; i++) flood.push(await openSocket(server));

      const refused = await rawRequest(server.url, { headers: json, body: chainId });
      expect(refused.status).toBe(429);
      expect(refused.headers["retry-after"]).toBe("1");
      expect(refused.headers.connection).toBe("close");
      expect(refused.body).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32005, message: "too many connections (limit 3); retry later" },
      });
      expect(await upgradeStatus(server.webSocketUrl)).toBe(429);
      // A flood of refused connections does not stop the client already connected.
      await Promise.all(
        Array.from({ length: 20 }, () => rawRequest(server.url, { headers: json, body: chainId })),
      );
      expect(await postVia(client, server.url, chainId)).toEqual({
        status: 200,
        text: JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0x7a69" }),
      });

      flood.pop()!.destroy();
      await expect.poll(() => upgradeStatus(server.webSocketUrl)).toBe("open");
    } finally {
      client.destroy();
      for (const socket of flood) socket.destroy();
      await server.close();
    }
  });

  it("refuses a client address past maxConnectionsPerIp, and serves other addresses", async () => {
    const server = await startStubServer({ maxConnections: 100, maxConnectionsPerIp: 2 });
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) open.push(await openSocket(server));
      const refused = await rawRequest(server.url, { headers: json, body: chainId });
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toBe(
        "too many connections from 127.0.0.1 (limit 2); close one or retry later",
      );
      expect(await upgradeStatus(server.webSocketUrl)).toBe(429);
      // Another address on the loopback network is a client of its own.
      const other = connect({ port: server.port, host: "127.0.0.1", localAddress: "127.0.0.2" });
      open.push(other);
      other.write(
        `POST /rpc HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${chainId.length}\r\n\r\n${chainId}`,
      );
      const head = await new Promise<string>((resolve) =>
        other.once("data", (data) => resolve(String(data))),
      );
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const socket of open) socket.destroy();
      await server.close();
    }
  });

  it("cuts off a refused connection that sends nothing, and drops connections past twice the limit unanswered", async () => {
    const server = await startStubServer({ maxConnections: 2, maxConnectionsPerIp: 100 });
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) open.push(await openSocket(server));
      const silent = await openSocket(server);
      open.push(silent, await openSocket(server));
      const dropped = new Promise((resolve) => server.server.once("drop", resolve));
      open.push(connect({ port: server.port, host: "127.0.0.1" }));
      await dropped;
      await new Promise((resolve) => silent.once("close", resolve));
    } finally {
      for (const socket of open) socket.destroy();
      await server.close();
    }
  });

  it("counts an IPv6 client by its /64 network, and IPv4-mapped addresses as IPv4", () => {
    expect(clientAddress("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("2001:db8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("2001:0db8:0001:0003::9")).toBe("2001:db8:1:3::/64");
    expect(clientAddress("::1")).toBe("0:0:0:0::/64");
    expect(clientAddress("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(clientAddress("10.1.2.3")).toBe("10.1.2.3");
  });
});
