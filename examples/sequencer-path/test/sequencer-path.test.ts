import { toSimpleAccount } from "@bundlekit/devnet";
import { createWalletClient, type Hash, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SequencerPath, startSequencerPath } from "../src/sequencer-path.ts";

const blockTimeMs = 500;

/** An operation sent to the stand-alone endpoint, pulled by the sequencer for its next block. */
describe("sequencer path", () => {
  let path: SequencerPath;
  beforeAll(async () => {
    path = await startSequencerPath({ blockTimeMs });
  });
  afterAll(() => path?.close());

  it("preconfirms an operation within a block time and includes it first in the promised block, with no bundle sent by the bundler's relayers", async () => {
    const { client, devnet, service } = path;
    const owner = privateKeyToAccount(devnet.accountKeys[0]!);
    const account = await toSimpleAccount({ client, owner, version: "0.7" });
    const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys[1]!) });
    await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: parseEther("1"), chain: devnet.chain }) });

    const bundlerClient = createBundlerClient({ account, client, transport: http(service.url), pollingInterval: 20 });
    const prepared = await bundlerClient.prepareUserOperation({ calls: [{ to: owner.address, value: 1n }] });
    const signature = await account.signUserOperation(prepared as never);
    // The engine's preconfirmation, and when the sequencer mined each block.
    const preconfirmed = new Promise<{ at: number; blockNumber: bigint }>((resolve) =>
      service.bundler.onStatusChange((change) => {
        if (change.status === "preconfirmed") resolve({ at: Date.now(), blockNumber: change.blockNumber! });
      }),
    );
    const minedAt = new Map<bigint, number>();
    path.sequencer.onBlock((block) => minedAt.set(block.blockNumber, block.minedAt));
    const sentAt = Date.now();
    const headAtSend = await client.getBlockNumber({ cacheTime: 0 });
    const userOpHash: Hash = await bundlerClient.sendUserOperation({ ...prepared, signature } as never);

    // Preconfirmed before its block exists: the promise comes first, the block after.
    const { at, blockNumber: promised } = await preconfirmed;
    expect(promised - headAtSend).toBeLessThanOrEqual(2n);
    expect(at - sentAt).toBeLessThanOrEqual(blockTimeMs + 250);
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash: userOpHash, timeout: 10_000 });
    expect(receipt.success).toBe(true);
    expect(receipt.receipt.blockNumber).toBe(promised);
    expect(at).toBeLessThanOrEqual(minedAt.get(promised)!);
    expect(receipt.receipt.transactionIndex).toBe(0);
    const block = await client.getBlock({ blockNumber: promised });
    expect(block.transactions.length).toBeGreaterThan(1);
    for (const relayer of service.bundler.relayers) expect(await client.getTransactionCount({ address: relayer })).toBe(0);
  });
});
