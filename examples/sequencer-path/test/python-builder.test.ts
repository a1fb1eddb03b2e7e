import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { toSimpleAccount } from "@bundlekit/devnet";
import { createWalletClient, type Hash, http, parseEther } from "viem";
import { createBundlerClient } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PythonBuilderPath, pythonDirectory, startPythonBuilderPath } from "../src/python-builder-path.ts";
import { pythonVectors } from "./python-vectors.ts";

/** One block as the Python builder reports it (python/builder.py). */
interface BuiltBlock {
  proposal: string | null;
  action: "committed" | "released" | null;
  blockNumber: number;
  userOpHashes: Hash[];
  transactionHash: Hash | null;
  preconfirmations?: { userOpHash: Hash; verified: boolean; signer?: string; status?: string; reason?: string }[];
}

/**
 * The Python builder (python/builder.py, standard library only) against the stand-alone service's
 * builder API on the devnet with automine off: it proposes, signs with its own key, sends the
 * bundle first, commits, verifies each signed preconfirmation and mines; it releases a bundle it
 * drops. The service has no relayer key: only the builder signs. Blocks are built when the test
 * says, so which block holds what is exact.
 */
describe("Python block builder", () => {
  let path: PythonBuilderPath;
  let blocks: AsyncIterator<string>;
  let stderr = "";

  beforeAll(async () => {
    path = await startPythonBuilderPath();
    path.builder.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    blocks = createInterface({ input: path.builder.stdout })[Symbol.asyncIterator]();
  });
  afterAll(() => path?.close());

  /** Tell the builder to build (or drop the bundle of) the next block, and read what it did. */
  async function next(command: "build" | "drop"): Promise<BuiltBlock> {
    path.builder.stdin.write(`${command}\n`);
    const line = await blocks.next();
    if (line.done) throw new Error(`the builder exited: ${stderr}`);
    return JSON.parse(line.value);
  }

  /** A funded SimpleAccount of account key `index` (each test its own), and a bundler client for it. */
  async function user(index: number) {
    const { client, devnet, service } = path;
    const owner = privateKeyToAccount(devnet.accountKeys[index]!);
    const account = await toSimpleAccount({ client, owner, version: "0.7" });
    const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: owner });
    const funding = await funder.sendTransaction({ to: account.address, value: parseEther("1"), chain: devnet.chain });
    expect((await next("build")).proposal).toBeNull(); // the builder's block carries the funding
    expect((await client.getTransactionReceipt({ hash: funding })).status).toBe("success");
    const bundler = createBundlerClient({ account, client, transport: http(service.url), pollingInterval: 20 });
    return {
      async send(): Promise<Hash> {
        const prepared = await bundler.prepareUserOperation({ calls: [{ to: owner.address, value: 1n }] });
        const signature = await account.signUserOperation(prepared as never);
        return bundler.sendUserOperation({ ...prepared, signature } as never);
      },
      receipt: (hash: Hash) => bundler.waitForUserOperationReceipt({ hash }),
      /** The service's lookup: `transactionHash` and `blockNumber` null while the operation is in the pool. */
      lookup: (hash: Hash) => bundler.request({ method: "eth_getUserOperationByHash", params: [hash] }),
    };
  }

  it("includes an operation first in its block, in the transaction it signed and committed, with a signed preconfirmation it verifies", async () => {
    const alice = await user(0);
    const userOpHash = await alice.send();
    const block = await next("build");
    expect(block).toMatchObject({ action: "committed", userOpHashes: [userOpHash] });
    // Checked before the block was mined: the service's key signed a promise of this block and transaction.
    expect(block.preconfirmations).toEqual([{ userOpHash, verified: true, signer: path.preconfirmationSigner, status: "promised" }]);
    const receipt = await alice.receipt(userOpHash);
    expect(receipt.success).toBe(true);
    expect(receipt.receipt.transactionHash).toBe(block.transactionHash);
    expect(receipt.receipt.blockNumber).toBe(BigInt(block.blockNumber));
    expect(receipt.receipt.transactionIndex).toBe(0);
    expect(receipt.receipt.from).toBe(path.builderAddress.toLowerCase());
  });

  it("puts a dropped bundle's operation back in the pool, and includes it in a later block", async () => {
    const bob = await user(1);
    const userOpHash = await bob.send();
    const dropped = await next("drop");
    expect(dropped).toMatchObject({ action: "released", userOpHashes: [userOpHash] });
    // Mined without it, and back in the pool: pending, in no transaction.
    expect(await bob.lookup(userOpHash)).toMatchObject({ transactionHash: null, blockNumber: null });
    const later = await next("build");
    expect(later).toMatchObject({ action: "committed", userOpHashes: [userOpHash] });
    expect((await bob.receipt(userOpHash)).receipt.transactionHash).toBe(later.transactionHash);
  });

  it("hashes, signs and recovers as viem does (python/test_vectors.py)", async () => {
    // The committed vectors are what viem makes today.
    expect(JSON.parse(readFileSync(join(pythonDirectory, "test_vectors.json"), "utf8"))).toEqual(await pythonVectors());
    const { stderr: report } = await promisify(execFile)("python3", ["-m", "unittest", "test_vectors"], { cwd: pythonDirectory });
    expect(report).toMatch(/\nOK\n?$/);
  });
});
