import { toSimpleAccount } from "@bundlekit/devnet";
import { createWalletClient, type Hash, http, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SequencerPath, startSequencerPath } from "../src/sequencer-path.ts";

/**
 * An operation sent to the stand-alone endpoint, pulled by the sequencer for its next block. The
 * sequencer builds a block when the test says, so the block an operation lands in is exact; how
 * long that takes at a block time is the preconfirmation benchmark's (bench/preconfirmation.ts).
 * The sequencer calls the engine in process, or over the service's builder API.
 */
describe.each([
  { name: "in process", builderApi: false },
  { name: "over the builder API", builderApi: true },
])("sequencer path, $name", ({ builderApi }) => {
  let path: SequencerPath;
  beforeAll(async () => {
    path = await startSequencerPath({ blockTimeMs: "on demand", builderApi });
  });
  afterAll(() => path?.close());

  it("preconfirms an operation for the next block before mining it, includes it first there, with no bundle sent by the bundler's relayers", async () => {
    const { client, devnet, service, sequencer } = path;
    const owner = privateKeyToAccount(devnet.accountKeys[0]!);
    const account = await toSimpleAccount({ client, owner, version: "0.7" });
    const funder = createWalletClient({ chain: devnet.chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys[1]!) });
    const funding = await funder.sendTransaction({ to: account.address, value: parseEther("1"), chain: devnet.chain });
    await sequencer.next(); // automine is off: the sequencer's block carries the funding
    expect((await client.getTransactionReceipt({ hash: funding })).status).toBe("success");

    const bundlerClient = createBundlerClient({ account, client, transport: http(service.url), pollingInterval: 20 });
    const prepared = await bundlerClient.prepareUserOperation({ calls: [{ to: owner.address, value: 1n }] });
    const signature = await account.signUserOperation(prepared as never);
    // In the order they happen: the engine's preconfirmation, and the sequencer's blocks once mined.
    const events: string[] = [];
    service.bundler.onStatusChange((change) => {
      if (change.status === "preconfirmed") events.push(`preconfirmed for ${change.blockNumber} in ${change.transactionHash}`);
    });
    sequencer.onBlock((block) => events.push(`mined ${block.blockNumber}`));
    const head = await client.getBlockNumber({ cacheTime: 0 });
    const userOpHash: Hash = await bundlerClient.sendUserOperation({ ...prepared, signature } as never);

    const block = await sequencer.next();
    expect(block.blockNumber).toBe(head + 1n);
    expect(block.bundle?.userOpHashes).toEqual([userOpHash]);
    // Preconfirmed before its block exists: the promise comes first, the block after.
    expect(events).toEqual([`preconfirmed for ${head + 1n} in ${block.bundle!.transactionHash}`, `mined ${head + 1n}`]);
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash: userOpHash });
    expect(receipt.success).toBe(true);
    expect(receipt.receipt.blockNumber).toBe(head + 1n);
    expect(receipt.receipt.transactionHash).toBe(block.bundle!.transactionHash);
    expect(receipt.receipt.transactionIndex).toBe(0);
    // The bundle first, then the sequencer's three ordinary transactions.
    expect((await client.getBlock({ blockNumber: head + 1n })).transactions).toEqual([block.bundle!.transactionHash, ...block.fillers]);
    expect(block.fillers).toHaveLength(3);
    for (const relayer of service.bundler.relayers) expect(await client.getTransactionCount({ address: relayer })).toBe(0);
  });
});
