import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  BundlerConfigError,
  type BundlerConfig,
  resolveBundlerConfig,
} from "../src/engine/config.ts";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { createEntryPointRegistry, defineEntryPoint } from "../src/entrypoint/registry.ts";
import { encodeBundlerConfig } from "../src/rpc/bundler-config.ts";
import { createRpcHandler } from "../src/rpc/handle-request.ts";

const relayerKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const relayer = privateKeyToAccount(relayerKey).address;

/** The parts of an engine `bundler_config` reads, without a chain. */
function engine(config: Partial<BundlerConfig> = {}) {
  return {
    chainId: 31337,
    entryPoints: createEntryPointRegistry([defineEntryPoint("0.7"), defineEntryPoint("0.8")]),
    relayers: [relayer],
    config: resolveBundlerConfig(config),
  };
}

describe("bundler_config", () => {
  it("answers the spec's shape with the engine's defaults", async () => {
    const handler = createRpcHandler(engine() as unknown as Bundler);
    const response = await handler.handle({ id: 1, method: "bundler_config" });
    expect(response).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        chainId: 31337,
        flags: { testingMode: false, redirectRpc: false },
        entryPoints: [
          "0x0000000071727de22e5e9d8baf0edac6f37da032",
          "0x4337084d9e255ff0702461cf8895ce9e3b5ff108",
        ],
        beneficiary: relayer,
        relayers: [relayer],
        minInclusionDenominator: 10,
        throttlingSlack: 10,
        banSlack: 50,
        minStake: { type: "BigNumber", hex: "0xde0b6b3a7640000" },
        minUnstakeDelay: 86400,
        minSignerBalance: "0.1 eth",
        multicall: "0xcA11bde05977b3631167028862bE2a173976CA11",
        estimationStaticBuffer: 0,
        validationGasLimit: 10000000,
        receiptLookupRange: 1024,
        explorerApiKey: false,
        conditionalTransactions: false,
        rpcEndpointSubmit: false,
        gasPriceMarkup: 0,
        enforceGasPrice: false,
        enforceGasPriceThreshold: 10,
        eip2930: false,
        useropsTTL: 300,
        whitelistedEntities: { paymaster: [], account: [], factory: [] },
        bundleGasLimitMarkup: 20,
        relayingMode: "classic",
        bundleInterval: 1000,
        bundleSize: 1000,
        pvgMarkup: 5,
        skipBundleValidation: false,
        validationMode: "safe",
        validationTracer: "in-process",
      },
    });
  });

  it("reports configured values in their wire units", () => {
    const paymaster = "0x1111111111111111111111111111111111111111";
    const beneficiary = "0x2222222222222222222222222222222222222222";
    const result = encodeBundlerConfig(
      engine({
        beneficiary,
        testingMode: true,
        redirectRpc: true,
        minStake: parseEther("0.01"),
        minSignerBalance: parseEther("2.5"),
        validationGasLimit: 7_000_000n,
        whitelistedEntities: { paymaster: [paymaster], account: [], factory: [] },
        relayingMode: "conditional",
        skipBundleValidation: true,
        eip2930: true,
        validationMode: "unsafe",
      }),
    );
    expect(result).toMatchObject({
      flags: { testingMode: true, redirectRpc: true },
      beneficiary,
      minStake: { type: "BigNumber", hex: "0x2386f26fc10000" },
      minSignerBalance: "2.5 eth",
      validationGasLimit: 7000000,
      whitelistedEntities: { paymaster: [paymaster], account: [], factory: [] },
      relayingMode: "conditional",
      conditionalTransactions: true,
      skipBundleValidation: true,
      eip2930: true,
      validationMode: "unsafe",
      validationTracer: null,
    });
    for (const key of [
      "chainId",
      "estimationStaticBuffer",
      "validationGasLimit",
      "receiptLookupRange",
      "pvgMarkup",
      "bundleGasLimitMarkup",
    ] as const) {
      expect(typeof result[key]).toBe("number");
    }
  });

  it("never shows a secret: relayer keys, the explorer key, the submit URL", () => {
    const explorerApiKey = "EXPLORER-KEY-3f9a1c77d2";
    const rpcEndpointSubmit = "https://user:s3cretpass@submit.example.org/v3/URL-KEY-8841";
    const json = JSON.stringify(encodeBundlerConfig(engine({ explorerApiKey, rpcEndpointSubmit })));
    expect(JSON.parse(json)).toMatchObject({ explorerApiKey: true, rpcEndpointSubmit: true });
    for (const secret of [
      explorerApiKey,
      "s3cretpass",
      "URL-KEY-8841",
      "submit.example.org",
      relayerKey.slice(2),
      relayerKey.slice(2, 18),
    ]) {
      expect(json).not.toContain(secret);
    }
  });
});

describe("resolveBundlerConfig", () => {
  it("fills in defaults and makes conditionalTransactions and relayingMode agree", () => {
    expect(resolveBundlerConfig({}).relayingMode).toBe("classic");
    expect(resolveBundlerConfig({ conditionalTransactions: true })).toMatchObject({
      relayingMode: "conditional",
      conditionalTransactions: true,
    });
    expect(resolveBundlerConfig({ relayingMode: "conditional" })).toMatchObject({
      relayingMode: "conditional",
      conditionalTransactions: true,
    });
  });

  it("rejects an unknown relaying mode and a submit endpoint that is not a URL, without echoing it", () => {
    expect(() => resolveBundlerConfig({ relayingMode: "flashbots" })).toThrow(BundlerConfigError);
    expect(() => resolveBundlerConfig({ relayingMode: "flashbots" })).toThrow(
      /relayingMode must be one of classic, conditional/,
    );
    const error = (() => {
      try {
        resolveBundlerConfig({ rpcEndpointSubmit: "submit.example.org/KEY-123" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(BundlerConfigError);
    expect(error?.message).toMatch(/rpcEndpointSubmit must be an http\(s\) or ws\(s\) URL/);
    expect(error?.message).not.toContain("KEY-123");
  });

  it("defaults the ERC-7562 size limits to the ERC's constants and refuses limits no operation could be bundled within", () => {
    expect(resolveBundlerConfig()).toMatchObject({
      maxUserOperationSize: 8192,
      maxPaymasterContextSize: 2048,
      maxBundleCalldataSize: 262_144,
      maxBundleContextSize: 65_536,
    });
    expect(() => resolveBundlerConfig({ maxBundleCalldataSize: 8192 })).toThrow(/maxBundleCalldataSize \(8192\) must hold one operation of maxUserOperationSize/);
    expect(() => resolveBundlerConfig({ maxBundleContextSize: 1024 })).toThrow(/maxBundleContextSize \(1024\) must be at least maxPaymasterContextSize \(2048\)/);
    expect(() => resolveBundlerConfig({ maxUserOperationSize: 0 })).toThrow(BundlerConfigError);
    expect(resolveBundlerConfig({ maxUserOperationSize: 1024, maxBundleCalldataSize: 1024 + 32 + 100 }).maxBundleCalldataSize).toBe(1156);
  });

  it("caps concurrent simulations at 16 with 32 waiting by default, and refuses a cap no simulation could run under", () => {
    expect(resolveBundlerConfig()).toMatchObject({ maxConcurrentSimulations: 16, maxQueuedSimulations: 32 });
    expect(() => resolveBundlerConfig({ maxConcurrentSimulations: 0 })).toThrow(new BundlerConfigError("maxConcurrentSimulations must be a positive integer"));
    expect(() => resolveBundlerConfig({ maxQueuedSimulations: -1 })).toThrow(new BundlerConfigError("maxQueuedSimulations must be an integer of at least 0"));
    expect(resolveBundlerConfig({ maxConcurrentSimulations: 1, maxQueuedSimulations: 0 })).toMatchObject({ maxConcurrentSimulations: 1, maxQueuedSimulations: 0 });
  });
});
