import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

const explorerApiKey = "EXPLORER-7f3e9a0c51";
const submitUrl = "https://operator:pa55word@submit.example.org/v3/SUBMIT-KEY-1234";

/** `bundler_config` and `redirectRpc` over HTTP against the stand-alone service. */
describe("bundler_config and redirectRpc", () => {
  let fx: ServiceFixture;
  beforeAll(async () => {
    const { bundler, redirectRpc, explorerApiKey: explorerKey } = loadConfig({
      BUNDLEKIT_REDIRECT_RPC: "true",
      BUNDLEKIT_EXPLORER_API_KEY: explorerApiKey,
      BUNDLEKIT_RPC_ENDPOINT_SUBMIT: submitUrl,
      BUNDLEKIT_MIN_SIGNER_BALANCE: "0.25 eth",
      BUNDLEKIT_USEROPS_TTL: "600",
    });
    fx = await serviceFixture({ bundler, redirectRpc, explorerApiKey: explorerKey });
  });
  afterAll(() => fx?.close());

  /** The node's own answer to a request, straight from anvil. */
  async function node(
    method: string,
    params: unknown[],
  ): Promise<{ result?: unknown; error?: unknown }> {
    const response = await fetch(fx.devnet.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await response.json()) as { result?: unknown; error?: unknown };
  }

  it("reports the configuration in the spec's shape and no secret", async () => {
    const answer = await fx.post(JSON.stringify({ id: 7, method: "bundler_config" }));
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe(7);
    const config = answer.body.result;
    expect(config).toMatchObject({
      chainId: fx.devnet.chainId,
      flags: { testingMode: false, redirectRpc: true },
      entryPoints: (["0.6", "0.7", "0.8", "0.9"] as const).map((v) =>
        fx.entryPoint(v).toLowerCase(),
      ),
      relayers: fx.devnet.relayerKeys.map((key) => privateKeyToAccount(key).address),
      minStake: { type: "BigNumber", hex: expect.stringMatching(/^0x[0-9a-f]+$/) },
      minSignerBalance: "0.25 eth",
      explorerApiKey: true,
      rpcEndpointSubmit: true,
      useropsTTL: 600,
      relayingMode: "classic",
    });
    expect(Object.keys(config)).toHaveLength(33);
    expect(config).toMatchObject({ validationMode: "safe", validationTracer: "in-process", preconfirmationSigner: null });
    const text = JSON.stringify(answer.body);
    for (const secret of [
      explorerApiKey,
      "pa55word",
      "SUBMIT-KEY-1234",
      "submit.example.org",
      ...fx.devnet.relayerKeys.map((k) => k.slice(2, 26)),
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it("forwards the node's methods and returns its answers verbatim", async () => {
    const relayer = privateKeyToAccount(fx.devnet.relayerKeys[0]!).address;
    for (const [method, params] of [
      ["eth_blockNumber", []],
      ["eth_getBalance", [relayer, "latest"]],
      ["eth_getCode", [fx.entryPoint("0.7"), "latest"]],
      ["net_version", []],
    ] as const) {
      const served = await fx.call(method, [...params]);
      expect(served.result).toBeDefined();
      expect(served.result).toEqual((await node(method, [...params])).result);
    }
  });

  it("passes the node's errors on unchanged: code, message and revert data", async () => {
    const revert = [{ to: fx.entryPoint("0.7"), data: "0x12345678" }, "latest"];
    const badAddress = ["0x1234", "latest"];
    for (const [method, params] of [
      ["eth_call", revert],
      ["eth_getBalance", badAddress],
    ] as const) {
      const served = await fx.call(method, [...params]);
      const direct = await node(method, [...params]);
      expect(direct.error).toBeDefined();
      expect(served.error).toEqual(direct.error);
    }
  });

  it("never forwards a signing method", async () => {
    const answer = await fx.call("eth_sign", [
      privateKeyToAccount(fx.devnet.relayerKeys[0]!).address,
      "0x00",
    ]);
    expect(answer.error.code).toBe(-32601);
  });
});

describe("redirectRpc off", () => {
  let fx: ServiceFixture;
  beforeAll(async () => {
    fx = await serviceFixture();
  });
  afterAll(() => fx?.close());

  it("answers the node's methods with -32601 and reports both secrets as unset", async () => {
    for (const method of ["eth_blockNumber", "eth_getBalance", "eth_call"]) {
      expect((await fx.call(method, [])).error.code).toBe(-32601);
    }
    const { result } = await fx.call("bundler_config");
    expect(result).toMatchObject({
      flags: { redirectRpc: false },
      explorerApiKey: false,
      rpcEndpointSubmit: false,
    });
  });
});
