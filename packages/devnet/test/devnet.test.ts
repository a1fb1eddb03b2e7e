import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  getAddress,
  getContractAddress,
  http,
  parseAbi,
  isAddressEqual,
  parseEther,
  parseGwei,
  type PublicClient,
  zeroAddress,
} from "viem";
import { privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CANONICAL_DEPLOYMENTS,
  DEVNET_PAYMASTER_SIGNER_KEY,
  type Devnet,
  ENTRY_POINT_VERSIONS,
  loadArtifact,
  PAYMASTER_DEPOSIT,
  PAYMASTER_STAKE,
  SIMPLE_7702_ACCOUNT,
  startAnvil,
  startDevnet,
} from "../src/index.ts";

const ANVIL_DEPLOYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

function portOf(rpcUrl: string): number {
  return Number(new URL(rpcUrl).port);
}

function isPortOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function clientFor(devnet: Devnet): PublicClient {
  return createPublicClient({ transport: http(devnet.rpcUrl) });
}

describe("startDevnet", () => {
  let devnet: Devnet;
  let second: Devnet;
  let client: PublicClient;

  beforeAll(async () => {
    [devnet, second] = await Promise.all([
      startDevnet(),
      startDevnet({ chainId: 1337, relayerCount: 3 }),
    ]);
    client = clientFor(devnet);
  });

  afterAll(async () => {
    await Promise.all([devnet?.stop(), second?.stop()]);
  });

  it("listens on a free local port with the requested chain id", async () => {
    expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(devnet.chainId).toBe(31337);
    expect(await client.getChainId()).toBe(31337);
  });

  it("deploys every EntryPoint and SimpleAccountFactory at its canonical address", async () => {
    for (const version of ENTRY_POINT_VERSIONS) {
      const canonical = CANONICAL_DEPLOYMENTS[version];
      expect(devnet.deployments[version]).toMatchObject({
        version,
        entryPoint: canonical.entryPoint,
        simpleAccountFactory: canonical.simpleAccountFactory,
      });
      for (const address of [canonical.entryPoint, canonical.simpleAccountFactory]) {
        const code = await client.getCode({ address });
        expect(code?.length ?? 0, `code at ${address}`).toBeGreaterThan(2);
      }
    }
  });

  it("deploys Simple7702Account at its canonical address for v0.8 and v0.9, wired to that version's EntryPoint", async () => {
    expect(devnet.deployments["0.8"].simple7702Account).toBe(SIMPLE_7702_ACCOUNT);
    expect(devnet.deployments["0.9"].simple7702Account).toBe("0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5");
    expect(devnet.deployments["0.6"].simple7702Account).toBeUndefined();
    expect(devnet.deployments["0.7"].simple7702Account).toBeUndefined();
    for (const version of ["0.8", "0.9"] as const) {
      const entryPoint = await client.readContract({
        address: devnet.deployments[version].simple7702Account!,
        abi: loadArtifact(version, "Simple7702Account").abi,
        functionName: "entryPoint",
      });
      expect(entryPoint).toBe(CANONICAL_DEPLOYMENTS[version].entryPoint);
    }
  });

  it("places v0.9's release-candidate code at the canonical addresses, its SenderCreator where the EntryPoint's constructor puts it", async () => {
    const { entryPoint } = CANONICAL_DEPLOYMENTS["0.9"];
    const senderCreator = await client.readContract({
      address: entryPoint,
      abi: parseAbi(["function senderCreator() view returns (address)"]),
      functionName: "senderCreator",
    });
    expect(senderCreator).toBe(getContractAddress({ from: entryPoint, nonce: 1n }));
    const creatorsEntryPoint = await client.readContract({
      address: senderCreator,
      abi: parseAbi(["function entryPoint() view returns (address)"]),
      functionName: "entryPoint",
    });
    expect(creatorsEntryPoint).toBe(entryPoint);
    // The EIP-712 domain is the canonical address's, as viem's hash assumes.
    const domain = await client.readContract({
      address: entryPoint,
      abi: parseAbi(["function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])"]),
      functionName: "eip712Domain",
    });
    expect(domain.slice(1, 5)).toEqual(["ERC4337", "1", 31337n, entryPoint]);
  });

  it.each(ENTRY_POINT_VERSIONS)("funds the v%s paymasters on their EntryPoint, signed by the devnet paymaster key", async (version) => {
    const { entryPoint, paymasters } = devnet.deployments[version];
    const entryPointAbi = loadArtifact(version, "EntryPoint").abi;
    const deposit = (address: Address) =>
      client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [address] });
    expect(await deposit(paymasters.verifying)).toBe(PAYMASTER_DEPOSIT);
    const signer = await client.readContract({
      address: paymasters.verifying,
      abi: parseAbi(["function verifyingSigner() view returns (address)"]),
      functionName: "verifyingSigner",
    });
    expect(signer).toBe(privateKeyToAddress(DEVNET_PAYMASTER_SIGNER_KEY));
    if (version === "0.6") {
      expect(paymasters.postOpWork).toBeUndefined();
      return;
    }
    expect(await deposit(paymasters.postOpWork!)).toBe(PAYMASTER_DEPOSIT);
    const info = (await client.readContract({
      address: entryPoint,
      abi: entryPointAbi,
      functionName: "getDepositInfo",
      args: [paymasters.postOpWork!],
    })) as { stake: bigint; staked: boolean };
    expect(info).toMatchObject({ staked: true, stake: PAYMASTER_STAKE });
  });

  it.each(ENTRY_POINT_VERSIONS)("wires the v%s factory to its EntryPoint", async (version) => {
    const { entryPoint, simpleAccountFactory } = devnet.deployments[version];
    const factoryAbi = loadArtifact(version, "SimpleAccountFactory").abi;
    const owner = privateKeyToAddress(devnet.accountKeys[0]!);

    const counterfactual = (await client.readContract({
      address: simpleAccountFactory,
      abi: factoryAbi,
      functionName: "getAddress",
      args: [owner, 0n],
    })) as Address;
    expect(getAddress(counterfactual)).toBe(counterfactual);
    expect(counterfactual).not.toBe(zeroAddress);

    const implementation = (await client.readContract({
      address: simpleAccountFactory,
      abi: factoryAbi,
      functionName: "accountImplementation",
    })) as Address;
    const accountEntryPoint = (await client.readContract({
      address: implementation,
      abi: loadArtifact(version, "SimpleAccount").abi,
      functionName: "entryPoint",
    })) as Address;
    expect(isAddressEqual(accountEntryPoint, entryPoint)).toBe(true);

    if (version === "0.8") {
      // v0.8 factories only accept calls from the EntryPoint's SenderCreator.
      const [factorySenderCreator, entryPointSenderCreator] = await Promise.all([
        client.readContract({
          address: simpleAccountFactory,
          abi: factoryAbi,
          functionName: "senderCreator",
        }),
        client.readContract({
          address: entryPoint,
          abi: loadArtifact(version, "EntryPoint").abi,
          functionName: "senderCreator",
        }),
      ]);
      expect(factorySenderCreator).toBe(entryPointSenderCreator);
    }
  });

  it("hands out funded, distinct relayer and account keys (not the deployer)", async () => {
    expect(devnet.relayerKeys).toHaveLength(2);
    expect(second.relayerKeys).toHaveLength(3);
    expect(devnet.accountKeys.length).toBeGreaterThanOrEqual(10);
    const all = [...devnet.relayerKeys, ...devnet.accountKeys];
    expect(new Set(all).size).toBe(all.length);
    const addresses = all.map((key) => privateKeyToAddress(key));
    expect(addresses).not.toContain(ANVIL_DEPLOYER);
    const balances = await Promise.all(addresses.map((address) => client.getBalance({ address })));
    for (const balance of balances) expect(balance).toBe(parseEther("10000"));
  });

  it("runs two devnets side by side", async () => {
    expect(portOf(second.rpcUrl)).not.toBe(portOf(devnet.rpcUrl));
    const secondClient = clientFor(second);
    expect(await secondClient.getChainId()).toBe(1337);
    const code = await secondClient.getCode({ address: CANONICAL_DEPLOYMENTS["0.7"].entryPoint });
    expect(code?.length ?? 0).toBeGreaterThan(2);
  });
});

describe("lifecycle", () => {
  it("stop() closes the port and is idempotent", async () => {
    const devnet = await startDevnet();
    const port = portOf(devnet.rpcUrl);
    expect(await isPortOpen(port)).toBe(true);
    await devnet.stop();
    expect(await isPortOpen(port)).toBe(false);
    await devnet.stop();
  });

  it("supports `await using` and interval mining", async () => {
    let port: number;
    {
      await using devnet = await startDevnet({ blockTime: 1 });
      port = portOf(devnet.rpcUrl);
      const code = await clientFor(devnet).getCode({
        address: CANONICAL_DEPLOYMENTS["0.8"].simpleAccountFactory,
      });
      expect(code?.length ?? 0).toBeGreaterThan(2);
    }
    expect(await isPortOpen(port)).toBe(false);
  });

  it('order "fifo" keeps a block\'s transactions in arrival order, whatever their fees', async () => {
    await using devnet = await startDevnet({ order: "fifo" });
    const client = clientFor(devnet);
    await client.request({ method: "evm_setAutomine", params: [false] } as never);
    const send = (key: Hex, tip: bigint) =>
      createWalletClient({ account: privateKeyToAccount(key), transport: http(devnet.rpcUrl) }).sendTransaction({
        to: zeroAddress,
        chain: null,
        maxFeePerGas: 2n * tip,
        maxPriorityFeePerGas: tip,
      });
    // The cheaper one first: by fees (anvil's default) the second would come first.
    const first = await send(devnet.accountKeys[0]!, parseGwei("1"));
    const second = await send(devnet.accountKeys[1]!, parseGwei("50"));
    await client.request({ method: "evm_mine" } as never);
    expect((await client.getBlock({ blockTag: "latest" })).transactions).toEqual([first, second]);
  });

  it("startAnvil: the process is gone after stop()", async () => {
    const anvil = await startAnvil();
    expect(isPidAlive(anvil.pid)).toBe(true);
    await anvil.stop();
    expect(isPidAlive(anvil.pid)).toBe(false);
  });

  it("rejects with anvil's error when the port is taken", async () => {
    await using devnet = await startDevnet();
    await expect(startDevnet({ port: portOf(devnet.rpcUrl) })).rejects.toThrow(
      /anvil exited during start-up[\s\S]*Address already in use/,
    );
  });

  it("rejects when anvil does not start in time", async () => {
    const dir = await mkdtemp(join(tmpdir(), "devnet-test-"));
    try {
      const fake = join(dir, "anvil");
      await writeFile(fake, "#!/bin/sh\necho 'starting...' >&2\nexec sleep 30\n");
      await chmod(fake, 0o755);
      await expect(startAnvil({ anvilPath: fake, startupTimeoutMs: 300 })).rejects.toThrow(
        /did not start listening within 300 ms[\s\S]*starting\.\.\./,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("rejects invalid options before spawning anything", async () => {
    await expect(startDevnet({ relayerCount: -1 })).rejects.toThrow(RangeError);
    await expect(startDevnet({ port: 70_000 })).rejects.toThrow(RangeError);
    await expect(startDevnet({ blockTime: 0 })).rejects.toThrow(RangeError);
    await expect(startDevnet({ order: "lifo" as never })).rejects.toThrow(/order must be "fees" or "fifo"/);
  });
});
