import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

/** The stand-alone service with debug methods on, as the issue found it, under its browser checks and connection limits. */

let fx: ServiceFixture;
beforeAll(async () => {
  fx = await serviceFixture({
    debugMethods: true,
    metricsPort: 0,
    transport: loadConfig({ BUNDLEKIT_MAX_CONNECTIONS_PER_IP: "3", BUNDLEKIT_ALLOWED_HOSTS: "bundler.example.org" }).transport,
  });
});
afterAll(() => fx?.close());

const entryPoint = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";
const victim = "0x1111111111111111111111111111111111111111";
const setReputation = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "debug_bundler_setReputation",
  params: [[{ address: victim, opsSeen: "0x64", opsIncluded: "0x0" }], entryPoint],
});

/** The status line of an answer to a request with this Host (an eth_chainId POST, or a GET), on a connection of its own. */
const statusLine = (host: string, url = fx.service.url, method = "POST") =>
  new Promise<string>((resolve) => {
    const { port, pathname } = new URL(url);
    const socket = connect(Number(port), "127.0.0.1");
    const body = method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }) : "";
    socket.write(
      `${method} ${pathname} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
    socket.once("data", (data) => {
      resolve(String(data).split("\r\n")[0]!);
      socket.destroy();
    });
  });

const reputationOf = async (address: string) =>
  ((await fx.call("debug_bundler_dumpReputation", [entryPoint])).result as { address: string }[]).filter(
    (entry) => entry.address.toLowerCase() === address.toLowerCase(),
  );

describe("the service from a browser", () => {
  it("does not run a web page's text/plain or form POST of a debug method (415), and runs the same call sent as JSON", async () => {
    for (const type of ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded"]) {
      const answer = await fetch(fx.service.url, {
        method: "POST",
        headers: { "content-type": type },
        body: setReputation,
      });
      expect(answer.status).toBe(415);
      expect(await reputationOf(victim)).toEqual([]);
    }
    expect((await fx.post(setReputation)).body).toEqual({ jsonrpc: "2.0", id: 1, result: "ok" });
    expect(await reputationOf(victim)).toHaveLength(1);
    await fx.call("debug_bundler_clearState");
  });

  it("refuses a web page's JSON POST (a foreign origin) and a foreign Host, on the endpoint and the metrics port, and serves the configured host", async () => {
    expect((await fx.post(setReputation, { origin: "https://attacker.example" })).status).toBe(403);
    expect(await statusLine("attacker.example")).toBe("HTTP/1.1 403 Forbidden");
    expect(await statusLine("bundler.example.org:4337")).toBe("HTTP/1.1 200 OK");
    // The metrics on their own port too.
    expect(await statusLine("attacker.example", fx.service.metricsUrl!, "GET")).toBe("HTTP/1.1 403 Forbidden");
    expect(await statusLine("bundler.example.org", fx.service.metricsUrl!, "GET")).toBe("HTTP/1.1 200 OK");
  });
});

describe("the service's connection limits", () => {
  it("refuses a fourth connection from one address as busy (429) while the first three are served", async () => {
    const port = Number(new URL(fx.service.url).port);
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const socket = connect(port, "127.0.0.1");
        await new Promise((resolve) => socket.once("connect", resolve));
        open.push(socket);
      }
      expect(await statusLine("127.0.0.1")).toBe("HTTP/1.1 429 Too Many Requests");
      for (const socket of open.splice(0)) socket.destroy();
      await expect.poll(() => statusLine("127.0.0.1")).toBe("HTTP/1.1 200 OK");
    } finally {
      for (const socket of open) socket.destroy();
    }
  });
});
