import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther, parseGwei } from "viem";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, settingNames } from "../src/config.ts";
import { startBundlerService } from "../src/server.ts";
import { describeSponsorship } from "../src/sponsorship/configured-policy.ts";

const relayerKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const signerKey = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba";
const paymaster = "0x1111111111111111111111111111111111111111";
const apiKey = "sk-wallet-app-3f9a2c7e5b1d";

/** A real chain's settings with the paymaster endpoint on. */
const endpoint = {
  BUNDLEKIT_RPC_URL: "http://127.0.0.1:1",
  BUNDLEKIT_RELAYER_KEYS: relayerKey,
  BUNDLEKIT_PAYMASTERS: `${paymaster}@0.7`,
  BUNDLEKIT_PAYMASTER_SIGNER_KEY: signerKey,
};

const quota = { windowSeconds: 3600, operations: 100, cost: "0.5 eth" };

/** `policy` written to a file, as `BUNDLEKIT_SPONSORSHIP_POLICY` names it. */
function policyFile(policy: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "bundlekit-policy-")), "policy.json");
  writeFileSync(file, typeof policy === "string" ? policy : JSON.stringify(policy));
  return file;
}

describe("the paymaster endpoint's sponsorship policy (BUNDLEKIT_SPONSORSHIP_POLICY)", () => {
  it("off the devnet, the endpoint does not start without a policy: one line naming the setting", () => {
    const refusal =
      "the paymaster endpoint (BUNDLEKIT_PAYMASTERS) signs only under a sponsorship policy: set BUNDLEKIT_SPONSORSHIP_POLICY " +
      "(sponsorshipPolicy) to a policy file with API keys, caps and quotas (docs/security.md)";
    expect(() => loadConfig(endpoint)).toThrow(new ConfigError(refusal));
    expect(settingNames).toContain("BUNDLEKIT_SPONSORSHIP_POLICY");
  });

  it("an embedder's hand-made config with an endpoint and no policy is refused before the node is asked", async () => {
    const config = { ...loadConfig({ ...endpoint, BUNDLEKIT_SPONSORSHIP_POLICY: policyFile({ maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "app", apiKey }] }) }), rpcUrl: endpoint.BUNDLEKIT_RPC_URL };
    await expect(startBundlerService({ ...config, sponsorshipPolicy: undefined })).rejects.toThrow(
      new ConfigError("the paymaster endpoint needs a sponsorship policy (BUNDLEKIT_SPONSORSHIP_POLICY)"),
    );
  });

  it("reads keys, allowlists, caps and quotas from the file; a key's own limits replace the shared ones", () => {
    const file = policyFile({
      validForSeconds: 60,
      maxFeePerGas: "50 gwei",
      maxCostPerOperation: "0.01 eth",
      quota,
      keys: [
        { name: "wallet app", apiKey, targets: [paymaster.replace("0x11", "0x22")] },
        { name: "partner", apiKey: "sk-partner-9d8c7b6a5f4e", senders: [paymaster], maxCostPerOperation: "0.002 eth", maxPreVerificationGas: 300000 },
      ],
    });
    const { sponsorshipPolicy, paymasterEndpoint } = loadConfig({ ...endpoint, BUNDLEKIT_SPONSORSHIP_POLICY: file });
    expect(paymasterEndpoint).toEqual({ paymasters: { "0.7": paymaster }, signerKey });
    expect(sponsorshipPolicy).toEqual({
      validForSeconds: 60,
      keys: [
        { name: "wallet app", apiKey, senders: undefined, targets: ["0x2211111111111111111111111111111111111111"], maxFeePerGas: parseGwei("50"), maxCostPerOperation: parseEther("0.01"), quota: { windowSeconds: 3600, operations: 100, cost: parseEther("0.5") } },
        { name: "partner", apiKey: "sk-partner-9d8c7b6a5f4e", senders: [paymaster], targets: undefined, maxFeePerGas: parseGwei("50"), maxPreVerificationGas: 300_000n, maxCostPerOperation: parseEther("0.002"), quota: { windowSeconds: 3600, operations: 100, cost: parseEther("0.5") } },
      ],
    });
  });

  it("takes the policy inline in the config file, and defaults signatures to 90 s", () => {
    const configFile = policyFile({ sponsorshipPolicy: { maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "app", apiKey }] } });
    expect(loadConfig({ ...endpoint, BUNDLEKIT_CONFIG: configFile }).sponsorshipPolicy?.validForSeconds).toBe(90);
  });

  it.each([
    [{ quota, keys: [{ name: "app", apiKey }] }, 'sponsorshipPolicy.keys[0] ("app") has no maxCostPerOperation: set it on the key or for all keys, so what the key can cost is bounded'],
    [{ maxCostPerOperation: "0.01 eth", keys: [{ name: "app", apiKey }] }, 'sponsorshipPolicy.keys[0] ("app") has no quota: set it on the key or for all keys, so what the key can cost is bounded'],
    [{ maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "app", apiKey, maxCostPerOp: "1 eth" }] }, "sponsorshipPolicy.keys[0].maxCostPerOp is not a setting (expected name, apiKey, senders, targets, maxFeePerGas, maxPreVerificationGas, maxCostPerOperation, quota)"],
    [{ maxCostPerOperation: "0.01 eth", quota, keys: [] }, "sponsorshipPolicy.keys must list at least one {name, apiKey} entry"],
    [{ maxCostPerOperation: "lots", quota, keys: [{ name: "app", apiKey }] }, 'sponsorshipPolicy.maxCostPerOperation must be an amount such as "0.1 eth", "5 gwei" or an integer number of wei, got "lots"'],
    [{ maxCostPerOperation: "0.01 eth", quota: { ...quota, windowSeconds: 0 }, keys: [{ name: "app", apiKey }] }, 'sponsorshipPolicy.quota.windowSeconds must be an integer from 1 to 2678400, got "0"'],
    [{ validForSeconds: 3600, maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "app", apiKey }] }, 'sponsorshipPolicy.validForSeconds must be an integer from 45 to 600, got "3600"'],
    [{ maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "app", apiKey, targets: [] }] }, "sponsorshipPolicy.keys[0].targets must be a non-empty list of addresses (leave it out to allow any)"],
  ])("refuses %j with one line naming the setting", (policy, message) => {
    expect(() => loadConfig({ ...endpoint, BUNDLEKIT_SPONSORSHIP_POLICY: policyFile(policy) })).toThrow(new ConfigError(message));
  });

  it("never echoes an API key: not a short one, not a duplicate, not one in a file that is not JSON", () => {
    const short = "sk-short-key";
    const cases = [
      [{ maxCostPerOperation: "1", quota, keys: [{ name: "app", apiKey: short }] }, 'sponsorshipPolicy.keys[0] ("app").apiKey must be a secret of at least 16 characters'],
      [{ maxCostPerOperation: "1", quota, keys: [{ name: "a", apiKey }, { name: "b", apiKey }] }, 'sponsorshipPolicy.keys: "b" has the same apiKey as another key'],
      [`{"keys": [{"name": "app", "apiKey": "${apiKey}",}]}`, "not valid JSON"],
    ] as const;
    for (const [policy, message] of cases) {
      const attempt = () => loadConfig({ ...endpoint, BUNDLEKIT_SPONSORSHIP_POLICY: policyFile(policy) });
      expect(attempt).toThrow(message);
      expect(attempt).toThrow(expect.objectContaining({ message: expect.not.stringMatching(/sk-/) }));
    }
  });

  it("a policy off the devnet with no endpoint to apply to is a mistake; on the devnet it replaces the open policy", () => {
    const file = policyFile({ maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "app", apiKey }] });
    expect(() => loadConfig({ BUNDLEKIT_RPC_URL: endpoint.BUNDLEKIT_RPC_URL, BUNDLEKIT_RELAYER_KEYS: relayerKey, BUNDLEKIT_SPONSORSHIP_POLICY: file })).toThrow(
      new ConfigError("BUNDLEKIT_SPONSORSHIP_POLICY is set, but no paymaster endpoint: set BUNDLEKIT_PAYMASTERS and BUNDLEKIT_PAYMASTER_SIGNER_KEY too"),
    );
    expect(loadConfig({ BUNDLEKIT_SPONSORSHIP_POLICY: file }).sponsorshipPolicy?.keys.map((key) => key.name)).toEqual(["app"]);
  });

  it("start-up says which policy signs: the keys by name (never the keys), or the open devnet policy and its caps", () => {
    const { sponsorshipPolicy } = loadConfig({
      ...endpoint,
      BUNDLEKIT_SPONSORSHIP_POLICY: policyFile({ maxCostPerOperation: "0.01 eth", quota, keys: [{ name: "wallet app", apiKey }, { name: "partner", apiKey: `${apiKey}-2` }] }),
    });
    expect(describeSponsorship(sponsorshipPolicy)).toBe("2 API keys (wallet app, partner); signatures valid 90 s");
    expect(describeSponsorship(undefined)).toBe(
      "open devnet policy, no API key needed; per operation at most maxFeePerGas 100 gwei, preVerificationGas 1000000, cost 0.05 ETH; " +
        "at most 1000 operations and 1 ETH per 3600 s",
    );
  });
});
