import { readFileSync } from "node:fs";
import { ENTRY_POINT_VERSIONS, SIMPLE_7702_ACCOUNT, toSimpleAccount } from "@bundlekit/devnet";
import { toKernelSmartAccount, toSafeSmartAccount, toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, parseEther, zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { toCoinbaseSmartAccount, toSimple7702SmartAccount } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";
import { sendFromSimpleAccount } from "./snippets/devnet-simple-account.ts";

const readme = readFileSync(new URL("../../../packages/devnet/README.md", import.meta.url), "utf8");

/** The verdict packages/devnet/README.md's table of smart accounts gives the row of `account`. */
function verdict(account: string): string | undefined {
  const row = readme.split("\n").find((line) => line.startsWith(`| ${account} |`));
  return row?.split("|")[3]?.trim();
}

/**
 * packages/devnet/README.md: its snippet runs as it is shown, and its table of smart accounts says
 * what the devnet really has: the contracts of the accounts it says work, none of the others'.
 */
describe("smart accounts on the devnet", () => {
  let fx: ServiceFixture;
  const owner = privateKeyToAccount(generatePrivateKey());
  const hasCode = async (address: Address) => ((await fx.client.getCode({ address })) ?? "0x") !== "0x";

  beforeAll(async () => {
    // Bundling on its own, as `pnpm start` does: the snippet only waits for its receipt.
    fx = await serviceFixture({ bundler: { bundling: { mode: "auto", intervalMs: 100 } } });
  });
  afterAll(() => fx?.close());

  it.each(ENTRY_POINT_VERSIONS)("the README's snippet, v%s: the devnet's SimpleAccount is deployed by its first operation and pays", async (version) => {
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const receipt = await sendFromSimpleAccount(fx.devnet, fx.service.url, version, to);
    expect(receipt.success).toBe(true);
    expect(receipt.entryPoint.toLowerCase()).toBe(fx.entryPoint(version).toLowerCase());
    expect(await fx.client.getBalance({ address: to })).toBe(parseEther("0.1"));
    expect(await hasCode(receipt.sender)).toBe(true);
  });

  it("packages/devnet/README.md shows the code the snippet test runs, as it is", () => {
    expect(readme).toContain(readFileSync(new URL("./snippets/devnet-simple-account.ts", import.meta.url), "utf8"));
  });

  it("SimpleAccount works on every version (the devnet's), and on v0.6–v0.8 (permissionless's): both use the deployed canonical factory", async () => {
    expect(verdict("`toSimpleAccount` (`@bundlekit/devnet`)")).toBe("yes");
    expect(verdict("`toSimpleSmartAccount` (permissionless)")).toBe("yes");
    for (const version of ENTRY_POINT_VERSIONS) {
      const { entryPoint, simpleAccountFactory } = fx.devnet.deployments[version];
      const ours = await toSimpleAccount({ client: fx.client, owner, version });
      expect((await ours.getFactoryArgs()).factory).toBe(simpleAccountFactory);
      expect(await hasCode(simpleAccountFactory)).toBe(true);
      if (version === "0.9") continue;
      const theirs = await toSimpleSmartAccount({ client: fx.client, owner, entryPoint: { address: entryPoint, version } });
      expect((await theirs.getFactoryArgs()).factory).toBe(simpleAccountFactory);
    }
  });

  it("permissionless's SimpleAccount does not know v0.9: asked for it, it takes another release's factory", async () => {
    expect(verdict("`toSimpleSmartAccount` (permissionless 0.4.1)")).toBe("**no**");
    const { entryPoint, simpleAccountFactory } = fx.devnet.deployments["0.9"];
    const theirs = await toSimpleSmartAccount({ client: fx.client, owner, entryPoint: { address: entryPoint, version: "0.9" as never } });
    expect((await theirs.getFactoryArgs()).factory).not.toBe(simpleAccountFactory);
  });

  it("viem's Simple7702Account works on v0.9: it delegates to v0.9's, which is deployed", async () => {
    const delegate = fx.devnet.deployments["0.9"].simple7702Account!;
    expect((await toSimple7702SmartAccount({ client: fx.client, owner, entryPoint: "0.9" })).authorization?.address).toBe(delegate);
    expect(await hasCode(delegate)).toBe(true);
  });

  it("Simple7702Account (viem's and permissionless's) works on v0.8: both delegate to the deployed one", async () => {
    expect(verdict("`toSimple7702SmartAccount` (viem)")).toBe("yes");
    expect(verdict("`toSimpleSmartAccount({ eip7702: true })` (permissionless)")).toBe("yes");
    const entryPoint = { address: fx.devnet.deployments["0.8"].entryPoint, version: "0.8" } as const;
    expect((await toSimple7702SmartAccount({ client: fx.client, owner })).authorization?.address).toBe(SIMPLE_7702_ACCOUNT);
    expect((await toSimpleSmartAccount({ client: fx.client, owner, eip7702: true, entryPoint })).authorization?.address).toBe(SIMPLE_7702_ACCOUNT);
    expect(await hasCode(SIMPLE_7702_ACCOUNT)).toBe(true);
  });

  it("Coinbase's Smart Wallet does not work: viem cannot even make the account, its factory has no code", async () => {
    expect(verdict("`toCoinbaseSmartAccount` (viem)")).toBe("**no**");
    await expect(toCoinbaseSmartAccount({ client: fx.client, owners: [owner], version: "1.1" })).rejects.toThrow('The contract function "getAddress" returned no data ("0x")');
  });

  it("Safe does not work: permissionless cannot make the account, its proxy factory has no code", async () => {
    expect(verdict("`toSafeSmartAccount` (permissionless)")).toBe("**no**");
    const entryPoint = { address: fx.devnet.deployments["0.7"].entryPoint, version: "0.7" } as const;
    await expect(toSafeSmartAccount({ client: fx.client, owners: [owner], version: "1.4.1", entryPoint })).rejects.toThrow(
      'The contract function "proxyCreationCode" returned no data ("0x")',
    );
  });

  it("Kernel does not work: its factory has no code, and the account's address comes back as the zero address", async () => {
    expect(verdict("`toKernelSmartAccount` (permissionless)")).toBe("**no**");
    const entryPoint = { address: fx.devnet.deployments["0.7"].entryPoint, version: "0.7" } as const;
    const account = await toKernelSmartAccount({ client: fx.client, owners: [owner], entryPoint });
    expect(await hasCode((await account.getFactoryArgs()).factory!)).toBe(false);
    expect(await account.getAddress()).toBe(zeroAddress);
  });
});
