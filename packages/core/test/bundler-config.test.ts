import { parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { BundlerConfigError } from "../src/errors/bundler-config-error.ts";
import { type BundlerSettingsInput, defaultBundlerSettings, mergeBundlerSettings, resolveBundlerSettings } from "../src/engine/settings.ts";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { createEntryPointRegistry, defineEntryPoint } from "../src/entrypoint/registry.ts";
import { encodeBundlerConfig } from "../src/rpc/bundler-config.ts";
import { createRpcHandler } from "../src/rpc/handle-request.ts";

const relayerKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const relayer = privateKeyToAccount(relayerKey).address;

/** The parts of an engine `bundler_config` reads, without a chain. */
function engine(input: BundlerSettingsInput = {}) {
  const settings = resolveBundlerSettings(input);
  return {
    chainId: 31337,
    entryPoints: createEntryPointRegistry([defineEntryPoint("0.7"), defineEntryPoint("0.8")]),
    relayers: [relayer],
    settings,
    bundling: { mode: settings.bundling.mode, intervalMs: settings.bundling.intervalMs },
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
        preconfirmationSigner: null,
      },
    });
  });

  it("reports configured values in their wire units", () => {
    const paymaster = "0x1111111111111111111111111111111111111111";
    const beneficiary = "0x2222222222222222222222222222222222222222";
    const result = encodeBundlerConfig(
      engine({
        bundling: { beneficiary, skipValidation: true, accessList: true },
        reputation: { minStake: parseEther("0.01"), whitelistedEntities: { paymaster: [paymaster], account: [], factory: [] } },
        relaying: { minSignerBalance: parseEther("2.5"), mode: "conditional" },
        gas: { validationGasLimit: 7_000_000n },
        validation: { mode: "unsafe" },
      }),
      { testingMode: true, redirectRpc: true, explorerApiKey: false },
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
    const json = JSON.stringify(
      encodeBundlerConfig(engine({ relaying: { submitUrl: rpcEndpointSubmit } }), { testingMode: false, redirectRpc: false, explorerApiKey: Boolean(explorerApiKey) }),
    );
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

describe("resolveBundlerSettings", () => {
  it("fills in every group's defaults and freezes the result", () => {
    const settings = resolveBundlerSettings({ bundling: { maxOperations: 10 } });
    expect(settings).toEqual({ ...defaultBundlerSettings, bundling: { ...defaultBundlerSettings.bundling, maxOperations: 10 } });
    expect(Object.isFrozen(settings)).toBe(true);
    expect(Object.isFrozen(settings.bundling)).toBe(true);
    expect(Object.isFrozen(settings.reputation.whitelistedEntities.paymaster)).toBe(true);
    expect(() => {
      (settings.bundling as { maxOperations: number }).maxOperations = 1;
    }).toThrow(TypeError);
  });

  it.each<[string, BundlerSettingsInput, string]>([
    ["a percentage as a bigint", { tracking: { feeBumpPercent: 5n as never } }, 'tracking.feeBumpPercent must be an integer from 10 to 1000, got "5"'],
    ["a bump below what nodes take", { tracking: { feeBumpPercent: 5 } }, 'tracking.feeBumpPercent must be an integer from 10 to 1000, got "5"'],
    ["no operations per bundle", { bundling: { maxOperations: 0 } }, 'bundling.maxOperations must be an integer from 1 to 9007199254740991, got "0"'],
    ["gas as a number", { gas: { validationGasLimit: 5_000_000 as never } }, 'gas.validationGasLimit must be an integer (bigint) of at least 21000, got "5000000"'],
    ["an unknown mode", { relaying: { mode: "flashbots" } }, 'relaying.mode must be one of classic, conditional, got "flashbots"'],
    ["a beneficiary that is no address", { bundling: { beneficiary: "me" as never } }, 'bundling.beneficiary must be an address, got "me"'],
    ["a setting of another group", { bundling: { ttlSeconds: 5 } as never }, "bundling.ttlSeconds is not a setting of bundling"],
    ["an unknown group", { pool: {} } as never, "pool is not a settings group"],
    ["a whitelist entry that is no address", { reputation: { whitelistedEntities: { paymaster: ["0x12"], account: [], factory: [] } } }, "reputation.whitelistedEntities.paymaster must be an address"],
  ])("refuses %s, naming the field", (_case, input, message) => {
    const error = (() => {
      try {
        resolveBundlerSettings(input);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(BundlerConfigError);
    expect((error as Error).message).toContain(message);
  });

  it("refuses a submit endpoint that is not a URL, without echoing it", () => {
    const error = (() => {
      try {
        resolveBundlerSettings({ relaying: { submitUrl: "submit.example.org/KEY-123" } });
      } catch (e) {
        return e as BundlerConfigError;
      }
    })();
    expect(error).toBeInstanceOf(BundlerConfigError);
    expect(error).toMatchObject({ setting: "relaying.submitUrl", problem: "must be an http(s) or ws(s) URL" });
    expect(error?.message).not.toContain("KEY-123");
  });

  it("defaults the ERC-7562 size limits to the ERC's constants and refuses limits no operation could be bundled within", () => {
    expect(resolveBundlerSettings().validation).toMatchObject({ maxUserOperationBytes: 8192, maxPaymasterContextBytes: 2048 });
    expect(resolveBundlerSettings().bundling).toMatchObject({ maxCalldataBytes: 262_144, maxContextBytes: 65_536 });
    expect(() => resolveBundlerSettings({ bundling: { maxCalldataBytes: 8192 } })).toThrow(
      /bundling.maxCalldataBytes \(8192\) must hold one operation of validation.maxUserOperationBytes/,
    );
    expect(() => resolveBundlerSettings({ bundling: { maxContextBytes: 1024 } })).toThrow(
      /bundling.maxContextBytes \(1024\) must be at least validation.maxPaymasterContextBytes \(2048\)/,
    );
    expect(() => resolveBundlerSettings({ validation: { maxUserOperationBytes: 0 } })).toThrow(BundlerConfigError);
    expect(resolveBundlerSettings({ validation: { maxUserOperationBytes: 1024 }, bundling: { maxCalldataBytes: 1024 + 32 + 100 } }).bundling.maxCalldataBytes).toBe(1156);
  });

  it("caps concurrent simulations at 16 with 128 waiting at most 5 s by default, and refuses a cap no simulation could run under", () => {
    expect(resolveBundlerSettings().validation).toMatchObject({ maxConcurrentSimulations: 16, maxQueuedSimulations: 128, maxSimulationWaitMs: 5_000 });
    expect(() => resolveBundlerSettings({ validation: { maxSimulationWaitMs: 0 } })).toThrow(/^validation.maxSimulationWaitMs must be an integer from 1 to 600000/);
    expect(() => resolveBundlerSettings({ validation: { maxConcurrentSimulations: 0 } })).toThrow(/^validation.maxConcurrentSimulations must be an integer from 1 to 10000/);
    expect(() => resolveBundlerSettings({ validation: { maxQueuedSimulations: -1 } })).toThrow(/^validation.maxQueuedSimulations must be an integer from 0 to 100000/);
    expect(resolveBundlerSettings({ validation: { maxConcurrentSimulations: 1, maxQueuedSimulations: 0 } }).validation).toMatchObject({ maxConcurrentSimulations: 1, maxQueuedSimulations: 0 });
  });

  it("layers inputs group by group", () => {
    expect(mergeBundlerSettings({ bundling: { mode: "manual", maxOperations: 5 } }, { bundling: { maxOperations: 7 }, gas: { enforceGasPrice: true } })).toMatchObject({
      bundling: { mode: "manual", maxOperations: 7 },
      gas: { enforceGasPrice: true },
    });
  });
});
