import type { Logger } from "@bundlekit/core";
import type { Devnet } from "@bundlekit/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.ts";
import { startBundlerService } from "../src/server.ts";
import { type NodeFault, startNodeProxy } from "./node-proxy.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

// Keys a hosted node provider puts in its URL: one in the path, one in the query.
const PATH_KEY = "AlchemyStyleKey0123456789abcdefXY";
const QUERY_KEY = "QueryKey9876543210";

/** How the node behind the proxy answers: `ok` forwards to the devnet, `hang` never answers (the service gives up after `nodeTimeoutMs`), the others as `NodeFault` says. */
type NodeMode = "ok" | NodeFault | "hang";

/** A node at `/v2/<key>?apikey=<key>`, as hosted providers serve one: a proxy to the devnet that can be made to fail. */
async function keyedNode(devnet: Devnet) {
  const proxy = await startNodeProxy(devnet.rpcUrl);
  return {
    url: `${proxy.url}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`,
    origin: proxy.url,
    setMode(mode: NodeMode) {
      proxy.fault(mode === "ok" || mode === "hang" ? undefined : mode);
      if (mode === "hang") proxy.hold();
      else proxy.release();
    },
    close: () => proxy.close(),
  };
}

let fx: ServiceFixture;
let node: Awaited<ReturnType<typeof keyedNode>>;
const lines: string[] = [];
const responses: string[] = [];

/**
 * Every line the service logs, at every level, as JSON, exactly as given: an embedder's own
 * logger, which redacts nothing itself (the service's loggers redact too; logger.test.ts).
 */
const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
  lines.push(
    JSON.stringify({ level, message, ...fields }, (_key, value) =>
      typeof value === "bigint" ? value.toString() : value,
    ),
  );
};
const recordingLogger: Logger = {
  debug: write("debug"),
  info: write("info"),
  warn: write("warn"),
  error: write("error"),
};

beforeAll(async () => {
  fx = await serviceFixture(
    // A hung node fails a call after 1 s, once.
    { debugMethods: true, nodeTimeoutMs: 1000, nodeRetryCount: 0 },
    {
      nodeUrl: async (devnet) => {
        node = await keyedNode(devnet);
        return node.url;
      },
      logger: recordingLogger,
    },
  );
});

afterAll(async () => {
  await fx?.close();
  await node?.close();
});

/** Call a method and keep the raw answer for the final check. */
async function call(method: string, params?: unknown[]) {
  const answer = await fx.post(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method, ...(params ? { params } : {}) }),
  );
  responses.push(JSON.stringify(answer.body));
  return answer.body;
}

describe("a node URL carrying an API key", () => {
  it("appears in no log line and no answer, through ordinary traffic and node faults", async () => {
    const entryPoint = fx.entryPoint("0.7");
    const account = await fx.makeAccount("0.7");
    const op = await fx.signedOperation(account);

    // Ordinary traffic.
    expect((await call("eth_chainId")).result).toBe("0x7a69");
    await call("eth_estimateUserOperationGas", [op, entryPoint]);
    await call("bundler_feeHistory", [entryPoint, "0x2"]);
    const hash = (await call("eth_sendUserOperation", [op, entryPoint])).result;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);

    // The node fails in each way while the operation waits to be bundled and callers keep asking.
    for (const mode of ["fail", "reject", "reset", "hang"] as const) {
      node.setMode(mode);
      await call("debug_bundler_sendBundleNow");
      await call("eth_estimateUserOperationGas", [op, entryPoint]);
      await call("bundler_feeHistory", [entryPoint, "0x2"]);
      await call("eth_getUserOperationReceipt", [hash]);
    }
    node.setMode("ok");
    await call("debug_bundler_sendBundleNow");

    const log = lines.join("");
    const secrets = [
      PATH_KEY,
      QUERY_KEY,
      ...fx.devnet.relayerKeys.flatMap((key) => [key.slice(2), BigInt(key).toString()]),
    ];
    for (const text of [...lines, ...responses]) {
      for (const secret of secrets) expect(text.toLowerCase()).not.toContain(secret.toLowerCase());
    }
    // The faults were logged, with the node named by scheme, host and port only.
    expect(log).toContain('"message":"bundle failed"');
    expect(log).toContain('"message":"internal error"');
    expect(log).toContain("The request took too long to respond.");
    expect(log).toContain(`${node.origin}/…`);
    expect(responses.some((response) => response.includes('"code":-32603'))).toBe(true);
  });

  it("appears in no error thrown by a start that fails on the node", async () => {
    node.setMode("reject");
    try {
      const error = await startBundlerService({ ...fx.config, rpcUrl: node.url, port: 0 }).then(
        () => expect.unreachable("the service started"),
        (thrown: Error) => thrown,
      );
      const text = JSON.stringify([
        error.message,
        error.stack,
        String((error as { cause?: unknown }).cause),
      ]);
      expect(text).toContain(`${node.origin}/…`);
      expect(text).not.toContain(PATH_KEY);
      expect(text).not.toContain(QUERY_KEY);
    } finally {
      node.setMode("ok");
    }
  });

  it("a database that cannot be opened stops the start naming its server, without the password", async () => {
    // Port 1 on this machine: nothing listens there, so the connection is refused at once.
    const database = "postgres://bundler:s3cret@127.0.0.1:1/bundlekit";
    const error = await startBundlerService({
      ...fx.config,
      rpcUrl: node.url,
      port: 0,
      database,
    }).then(
      () => expect.unreachable("the service started"),
      (thrown: Error) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      "cannot open the database postgres://127.0.0.1:1/…: connect ECONNREFUSED 127.0.0.1:1",
    );
  });
});
