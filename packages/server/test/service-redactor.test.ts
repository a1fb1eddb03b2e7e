import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { serviceRedactor } from "../src/service-redactor.ts";

const relayerKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const signerKey = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
const secrets = {
  nodeKey: "NodePathKey0123456789abcdef",
  nodeQuery: "NodeQueryKey42",
  submitKey: "SubmitRelayKey0123456789",
  explorer: "ExplorerApiKey77",
  sponsor: "SponsorApiKey-0123456789",
  password: "db-s3cret-pw",
};

describe("serviceRedactor", () => {
  it("hides every secret of the configuration, wherever it appears", () => {
    const file = join(mkdtempSync(join(tmpdir(), "bundlekit-")), "config.json");
    writeFileSync(
      file,
      JSON.stringify({
        rpcUrl: `https://eth-mainnet.example/v2/${secrets.nodeKey}?apikey=${secrets.nodeQuery}`,
        relayerKeys: [relayerKey],
        database: `postgres://bundler:${secrets.password}@db.internal:5432/bundlekit`,
        paymasters: { "0.7": "0x1111111111111111111111111111111111111111" },
        paymasterSignerKey: signerKey,
        sponsorshipPolicy: {
          maxCostPerOperation: "0.01 eth",
          quota: { windowSeconds: 3600, operations: 100, cost: "0.5 eth" },
          keys: [{ name: "app", apiKey: secrets.sponsor }],
        },
        explorerApiKey: secrets.explorer,
        rpcEndpointSubmit: `https://relay.example/${secrets.submitKey}`,
      }),
    );
    const redactor = serviceRedactor(loadConfig({ BUNDLEKIT_CONFIG: file }));
    // Each secret as it may show up: a key with and without 0x, in upper case, in decimal.
    const forms = [
      ...Object.values(secrets),
      relayerKey,
      signerKey.slice(2).toUpperCase(),
      BigInt(relayerKey).toString(),
      BigInt(signerKey).toString(),
    ];
    const redacted = redactor.text(forms.join(" | "));
    expect(redacted.split(" | ")).toEqual(
      forms.map((form) => (form.startsWith("0x") ? "0x[redacted]" : "[redacted]")),
    );
  });
});
