import { type EntryPointVersion, type L1FeeModel, placeL1FeeStandIn } from "@bundlekit/devnet";
import { type Address, type Hex, parseGwei, serializeTransaction, size } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import { createArbitrumL1DataCost, createOpStackL1DataCost, type L1DataCost } from "../src/gas/l1-data-cost.ts";
import { engineFixture, rejection } from "./fixtures.ts";

/**
 * preVerificationGas on an L2 covers the operation's L1 data fee: the devnet stands in for an OP
 * stack and an Arbitrum node (their fee interfaces at the predeploy addresses, a fixed price per
 * byte), and the fee the included bundle transaction really incurs is what the operation repays.
 */
describe("L1 data cost in preVerificationGas", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  /** Prices per byte: wei on OP stack, L2 gas (at the stand-in's L2 base fee of 1 gwei) on Arbitrum. */
  const perByte: Record<L1FeeModel, bigint> = { "op-stack": parseGwei("5"), arbitrum: 5n };
  const costs: Record<L1FeeModel, (client: ChainClient) => L1DataCost> = { "op-stack": createOpStackL1DataCost, arbitrum: createArbitrumL1DataCost };

  beforeAll(async () => {
    fx = await engineFixture();
    for (const model of ["op-stack", "arbitrum"] as const) await placeL1FeeStandIn(fx.devnet, model, perByte[model]);
  });
  afterAll(() => fx?.devnet.stop());

  const recipient = (): Address => privateKeyToAccount(fx.devnet.accountKeys[12]!).address;

  /** The L1 data fee, in wei, the stand-in charges the mined transaction `hash`. */
  async function l1FeeOf(model: L1FeeModel, hash: Hex): Promise<bigint> {
    const transaction = await fx.client.getTransaction({ hash });
    if (model === "arbitrum") return BigInt(size(transaction.input)) * perByte.arbitrum * parseGwei("1");
    const signed = serializeTransaction({ ...transaction, data: transaction.input } as never, { r: transaction.r!, s: transaction.s!, yParity: transaction.yParity! });
    return BigInt(size(signed)) * perByte["op-stack"];
  }

  it.each([
    ["op-stack", "0.6"],
    ["op-stack", "0.7"],
    ["op-stack", "0.8"],
    ["arbitrum", "0.7"],
  ] as [L1FeeModel, EntryPointVersion][])("%s, v%s: the estimate covers the bundle's L1 fee, and less is refused naming the L1 part", async (model, version) => {
    const { bundler: onL1 } = await fx.makeBundler();
    const { bundler } = await fx.makeBundler({ l1DataCost: costs[model](fx.client as unknown as ChainClient) });
    const account = await fx.makeAccount(version);
    const call = { to: recipient(), value: 1n };
    const withoutL1 = await fx.makeOperation(onL1, account, call);
    const op = await fx.makeOperation(bundler, account, call);
    const l1Part = op.preVerificationGas - withoutL1.preVerificationGas;
    expect(l1Part).toBeGreaterThan(0n);

    const refused = await rejection(bundler.sendUserOperation(withoutL1, account.entryPoint.address));
    expect(refused.code).toBe(RpcErrorCode.invalidParams);
    expect(refused.message).toMatch(/^invalid preVerificationGas: too low: expected at least \d+ \(\d+ of it for the L1 data fee\), provided only \d+/);

    const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
    const [transactionHash] = await bundler.sendBundleNow();
    const receipt = await bundler.getUserOperationReceipt(hash);
    expect(receipt?.success).toBe(true);
    // What the operation paid for its L1 part covers the fee its bundle incurred, with little to spare.
    const block = await fx.client.getBlock({ blockHash: (await fx.client.getTransaction({ hash: transactionHash! })).blockHash! });
    const [price] = [op.maxFeePerGas, block.baseFeePerGas! + op.maxPriorityFeePerGas].sort((a, b) => (a < b ? -1 : 1));
    const fee = await l1FeeOf(model, transactionHash!);
    expect(l1Part * price!).toBeGreaterThanOrEqual(fee);
    expect(l1Part * price!).toBeLessThan((fee * 3n) / 2n);
  });
});
