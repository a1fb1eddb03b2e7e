import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { createPublicClient, custom, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBundler } from "../src/engine/create-bundler.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { Logger } from "../src/ports/logger.ts";
import { createRedactor } from "../src/redaction/redactor.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import { testEngineSettings, testSigner } from "./fixtures.ts";

const KEY = "EngineNodeKey0123456789abcdef";
const NODE = `https://node.example/v2/${KEY}`;

/** The engine on a devnet whose node, once `failing`, fails every call with viem's kind of message (the URL in it). */
describe("the engine's log lines", () => {
  let devnet: Devnet;
  let failing = false;
  beforeAll(async () => {
    devnet = await startDevnet();
  });
  afterAll(() => devnet?.stop());

  async function engine(parameters: { redactor?: ReturnType<typeof createRedactor> } = {}) {
    const upstream = http(devnet.rpcUrl)({ chain: devnet.chain });
    const transport = custom({
      request: async (args) => {
        if (failing)
          throw new Error(
            `HTTP request failed.\n\nURL: ${NODE}\nRequest body: {"method":"${args.method}"}`,
          );
        return upstream.request(args);
      },
    });
    const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
    const write = (level: string) => (message: string, fields?: Record<string, unknown>) =>
      void lines.push({ level, message, fields });
    const logger: Logger = {
      debug: write("debug"),
      info: write("info"),
      warn: write("warn"),
      error: write("error"),
    };
    const bundler = await createBundler({
      client: createPublicClient({
        chain: devnet.chain,
        transport,
        pollingInterval: 50,
      }) as unknown as ChainClient,
      store: createMemoryMempoolStore(),
      signer: testSigner(devnet.relayerKeys),
      logger,
      settings: { ...testEngineSettings, tracking: { blockPollingIntervalMs: 20 } },
      ...parameters,
    });
    return { bundler, lines };
  }

  /** The engine started while its node fails: every line it logs until it says so. */
  async function linesOfAFailingNode(parameters: Parameters<typeof engine>[0] = {}) {
    const { bundler, lines } = await engine(parameters);
    failing = true;
    try {
      bundler.start();
      await expect
        .poll(() => lines.some((line) => line.message === "could not read the latest block"))
        .toBe(true);
    } finally {
      failing = false;
      await bundler.stop();
    }
    return {
      lines,
      failure: lines.find((line) => line.message === "could not read the latest block")!,
    };
  }

  it("name a failing node by scheme and host only, without the key in its URL", async () => {
    const { lines, failure } = await linesOfAFailingNode();
    expect(failure).toMatchObject({
      level: "warn",
      fields: { error: expect.stringContaining("URL: https://node.example/…") },
    });
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it("hide the secrets of the redactor they are given", async () => {
    // A stand-in secret that the failing node's message is sure to hold: the method it was asked.
    const { failure } = await linesOfAFailingNode({
      redactor: createRedactor(["eth_getBlockByNumber"]),
    });
    expect(failure.fields?.error).toContain('Request body: {"method":"[redacted]"}');
  });
});
