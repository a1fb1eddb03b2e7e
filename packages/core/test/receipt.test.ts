import type { EntryPointVersion } from "@bundlekit/devnet";
import {
  encodeFunctionData,
  formatTransactionReceipt,
  type Hash,
  parseAbi,
  parseEther,
  type RpcTransactionReceipt,
  toEventSelector,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BundlerSettingsInput } from "../src/engine/settings.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { UserOperationReceipt } from "../src/receipt/lookup.ts";
import { encodeUserOperationReceipt } from "../src/rpc/encode.ts";
import { createRpcHandler, type JsonRpcResponse } from "../src/rpc/handle-request.ts";
import { engineFixture } from "./fixtures.ts";

const depositedTopic = toEventSelector("Deposited(address,uint256)");
const depositTo = parseAbi(["function depositTo(address account) payable"]);

/**
 * Receipts in process are in domain form (viem's types: bigint, number, Address, Hash), and the
 * JSON-RPC layer writes them back exactly as the node sent its receipt.
 */
describe("user operation receipts", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  /** An included operation that deposited to its EntryPoint: its one log is `Deposited`. */
  async function includedDeposit(version: EntryPointVersion, client?: ChainClient, settings?: BundlerSettingsInput) {
    const { bundler } = await fx.makeBundler({ client, settings });
    const account = await fx.makeAccount(version);
    const entryPoint = account.entryPoint.address;
    const data = encodeFunctionData({ abi: depositTo, args: [account.address] });
    const op = await fx.makeOperation(bundler, account, {
      to: entryPoint,
      value: parseEther("0.01"),
      data,
    });
    const hash = await bundler.sendUserOperation(op, entryPoint);
    const [transactionHash] = await bundler.sendBundleNow();
    return { bundler, account, entryPoint, hash, transactionHash: transactionHash! };
  }

  it.each<EntryPointVersion>(["0.6", "0.7", "0.8", "0.9"])(
    "v%s: the in-process receipt has bigint quantities, number indices and typed logs",
    async (version) => {
      const { bundler, account, entryPoint, hash, transactionHash } =
        await includedDeposit(version);
      const receipt = (await bundler.getUserOperationReceipt(hash))!;
      const mined = await fx.client.getTransactionReceipt({ hash: transactionHash });

      expect(typeof receipt.receipt.gasUsed).toBe("bigint");
      expect(receipt.receipt.gasUsed).toBe(mined.gasUsed);
      expect(receipt.receipt).toMatchObject({
        status: "success",
        type: "eip1559",
        transactionIndex: 0,
        confirmations: 1n,
        blockNumber: mined.blockNumber,
      });
      // The whole transaction receipt is what viem's own client makes of the node's.
      const { confirmations: _, ...transaction } = receipt.receipt;
      expect(transaction).toEqual(mined);

      expect(receipt.logs).toHaveLength(1);
      const [deposited] = receipt.logs;
      expect(deposited!.address.toLowerCase()).toBe(entryPoint.toLowerCase());
      expect(deposited!.topics[0]).toBe(depositedTopic);
      expect(deposited).toMatchObject({
        blockNumber: mined.blockNumber,
        blockHash: mined.blockHash,
        transactionHash,
        transactionIndex: 0,
        removed: false,
      });
      expect(typeof deposited!.logIndex).toBe("number");
      expect(receipt).toMatchObject({ sender: account.address, success: true });
      expect(typeof receipt.actualGasUsed).toBe("bigint");

      const lookup = await bundler.getUserOperationByHash(hash);
      expect(lookup).toMatchObject({
        entryPoint,
        transactionHash,
        blockHash: mined.blockHash,
        blockNumber: mined.blockNumber,
      });
    },
  );

  it("the receipt of an operation the engine saw included comes from its tracker: one node request, its block still canonical, and confirmations from the tracker's head", async () => {
    const node = fx.countingClient();
    const { bundler, hash, transactionHash } = await includedDeposit("0.7", node.client, { tracking: { blockPollingIntervalMs: 20 } });
    node.reset();
    const receipt = await bundler.getUserOperationReceipt(hash);
    expect(receipt?.success).toBe(true);
    expect(receipt?.receipt.confirmations).toBe(1n);
    const { confirmations: _, ...transaction } = receipt!.receipt;
    expect(transaction).toEqual(await fx.client.getTransactionReceipt({ hash: transactionHash }));
    expect(node.requests).toEqual({ eth_getBlockByNumber: 1 });

    await fx.client.request({ method: "anvil_mine" as never, params: ["0x2"] as never });
    bundler.start();
    try {
      // Once the tracker has followed the two new blocks, the receipt counts them.
      await expect.poll(async () => (await bundler.getUserOperationReceipt(hash))?.receipt.confirmations).toBe(3n);
    } finally {
      await bundler.stop();
    }
  });

  it("a kept receipt whose block was reorged out is not served, even before the tracker sees the reorg", async () => {
    // Not started: the tracker saw the bundle mined and will see no later block.
    const { bundler, hash } = await includedDeposit("0.7");
    const before = (await bundler.getUserOperationReceipt(hash))!;
    await fx.client.request({ method: "anvil_reorg" as never, params: [1, []] as never });
    expect((await fx.client.getBlock({ blockNumber: before.receipt.blockNumber })).hash).not.toBe(before.receipt.blockHash);
    const after = await bundler.getUserOperationReceipt(hash);
    expect(after?.receipt.blockHash).not.toBe(before.receipt.blockHash);
  });

  it("a submitted operation is looked up by its recorded transaction, no log scan: none while it waits in the node, the receipt once mined", async () => {
    const node = fx.countingClient();
    const { bundler, store } = await fx.makeBundler({
      client: node.client,
      settings: { bundling: { mode: "auto", intervalMs: 20 }, tracking: { blockPollingIntervalMs: 20 } },
    });
    const account = await fx.makeAccount("0.7");
    const op = await fx.makeOperation(bundler, account, { to: account.address });
    await fx.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    try {
      bundler.start();
      const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
      await expect.poll(async () => (await store.get(hash))?.status).toBe("submitted");
      node.reset();
      expect(await bundler.getUserOperationReceipt(hash)).toBeUndefined();
      expect((await bundler.getUserOperationByHash(hash))?.transactionHash).toBeUndefined();
      const transactionHash = (await store.get(hash))!.transactionHash;
      await fx.client.request({ method: "evm_mine" as never });
      const receipt = await bundler.getUserOperationReceipt(hash);
      expect(receipt?.receipt.transactionHash).toBe(transactionHash);
      expect(receipt?.success).toBe(true);
      expect(node.requests.eth_getLogs).toBeUndefined();
    } finally {
      await bundler.stop();
      await fx.client.request({ method: "evm_setAutomine" as never, params: [true] as never });
    }
  });

  it("eth_getUserOperationReceipt answers the node's receipt byte for byte, with confirmations and byzantium", async () => {
    const { bundler, hash, transactionHash } = await includedDeposit("0.7");
    const handler = createRpcHandler(bundler);
    const response = (await handler.handle({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getUserOperationReceipt",
      params: [hash],
    })) as JsonRpcResponse;
    const wire = (response as { result: { logs: unknown[]; receipt: { confirmations: string } } })
      .result;
    const node = await fx.client.request({
      method: "eth_getTransactionReceipt",
      params: [transactionHash],
    });

    expect(wire.receipt.confirmations).toBe("0x1");
    expect(JSON.stringify(wire.receipt)).toBe(
      JSON.stringify({ ...node, confirmations: "0x1", byzantium: true }),
    );
    // The operation's own log: the deposit its execution made (the bundle's first is its prefund).
    expect(JSON.stringify(wire.logs)).toBe(
      JSON.stringify(node!.logs.filter((log) => log.topics[0] === depositedTopic).slice(1)),
    );
  });

  it("writes back what viem does not type, blob fields and unknown transaction types as the node sent them", () => {
    const node = nodeReceipt();
    const wire = encodeUserOperationReceipt(domainReceipt(node))!;
    expect(JSON.stringify(wire.receipt)).toBe(
      JSON.stringify({ ...node, confirmations: "0x10", byzantium: true }),
    );
    expect(JSON.stringify(wire.logs)).toBe(JSON.stringify(node.logs));
  });

  it("answers a receipt whose node left a quantity out, with that field null as viem reads it", () => {
    const { effectiveGasPrice: _, ...node } = nodeReceipt();
    const wire = encodeUserOperationReceipt(domainReceipt(node))!;
    expect(JSON.stringify(wire.receipt)).toBe(
      JSON.stringify({ ...node, effectiveGasPrice: null, confirmations: "0x10", byzantium: true }),
    );
  });
});

/** A receipt as a node could send it: an OP deposit's type and fee fields, blob fields, anvil's numeric `blockTimestamp`. */
function nodeReceipt() {
  const log = {
    address: "0x0000000071727de22e5e9d8baf0edac6f37da032",
    topics: [depositedTopic],
    data: "0x01",
    blockHash: `0x${"ab".repeat(32)}`,
    blockNumber: "0x1f",
    blockTimestamp: "0x6b0778e5",
    transactionHash: `0x${"cd".repeat(32)}`,
    transactionIndex: "0x3",
    logIndex: "0x0",
    removed: false,
  } as const;
  return {
    type: "0x7e",
    status: "0x0",
    cumulativeGasUsed: "0x5208",
    logs: [log, { ...log, blockTimestamp: undefined, logIndex: "0x1" }],
    logsBloom: "0x00",
    transactionHash: log.transactionHash,
    transactionIndex: "0x3",
    blockHash: log.blockHash,
    blockNumber: "0x1f",
    gasUsed: "0x5208",
    effectiveGasPrice: "0x3b9aca00",
    blobGasPrice: "0x1",
    blobGasUsed: "0x20000",
    from: "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
    to: null,
    contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    blockTimestamp: 1795651813,
    l1Fee: "0x2a",
    l1FeeScalar: "0.684",
  };
}

/** The engine's receipt of an operation carried by the transaction of `node`'s receipt. */
function domainReceipt(node: object): UserOperationReceipt {
  const receipt = formatTransactionReceipt(node as RpcTransactionReceipt);
  return {
    userOpHash: `0x${"01".repeat(32)}` as Hash,
    entryPoint: receipt.logs[0]!.address,
    sender: receipt.from,
    nonce: 0n,
    paymaster: "0x0000000000000000000000000000000000000000",
    actualGasCost: 1n,
    actualGasUsed: 1n,
    success: false,
    logs: receipt.logs,
    receipt: { ...receipt, confirmations: 16n },
  };
}
