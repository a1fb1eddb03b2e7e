import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeTransport } from "../src/node-transport.ts";

/**
 * The service's node transport at the HTTP port: requests made together share one HTTP request
 * up to `batchSize`, each still answered (or failed) on its own.
 */
describe("node transport batching", () => {
  let server: Server;
  let url: string;
  const bodies: unknown[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString()));
      req.on("end", () => {
        const body = JSON.parse(text) as { id: number; method: string } | { id: number; method: string }[];
        bodies.push(body);
        // eth_chainId answers 0x1; any other method is an error of its own.
        const answer = (request: { id: number; method: string }) =>
          request.method === "eth_chainId"
            ? { jsonrpc: "2.0", id: request.id, result: "0x1" }
            : { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: `no ${request.method}` } };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = async (batchSize: number) => {
    bodies.length = 0;
    const client = createPublicClient({ transport: nodeTransport(url, { timeoutMs: 5000, retryCount: 0, batchSize }) });
    const outcomes = await Promise.allSettled([
      client.request({ method: "eth_chainId" }),
      client.request({ method: "eth_chainId" }),
      client.request({ method: "eth_blockNumber" }),
    ]);
    return { outcomes, sizes: bodies.map((body) => (Array.isArray(body) ? body.length : 1)) };
  };

  it("joins requests made together into batches of at most batchSize, each answered on its own", async () => {
    const { outcomes, sizes } = await send(2);
    expect(sizes).toEqual([2, 1]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(outcomes[0]).toMatchObject({ value: "0x1" });
    expect(outcomes[2]).toMatchObject({ reason: expect.objectContaining({ details: "no eth_blockNumber" }) });
  });

  it("sends each request alone with batchSize 1", async () => {
    const { sizes } = await send(1);
    expect(sizes).toEqual([1, 1, 1]);
  });
});
