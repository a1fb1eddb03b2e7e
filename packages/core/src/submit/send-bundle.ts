import type { Hash } from "viem";
import type { Bundle } from "../bundle/build-bundle.ts";
import type { FeeOracle } from "../gas/fee-oracle.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { RelayerLease } from "../ports/relayer-signer.ts";
import type { Submitter } from "../ports/submitter.ts";
import { decodeUserOperationEvent, type RawLog, userOperationEventTopic } from "../receipt/user-operation-event.ts";
import type { StatusListener } from "../engine/status.ts";

export interface SendBundleContext {
  client: ChainClient;
  chainId: number;
  store: MempoolStore;
  submitter: Submitter;
  feeOracle: FeeOracle;
  clock: Clock;
  logger: Logger;
  emit: StatusListener;
  /** Percent added to the bundle's gas for the transaction's gas limit (`bundleGasLimitMarkup`). */
  bundleGasLimitMarkup: bigint;
  receiptTimeoutMs: number;
}

/**
 * Sign a bundle with the leased relayer, hand it to the submitter, and follow it to its receipt:
 * operations with a `UserOperationEvent` become `included`, the rest `failed`. When no receipt
 * comes in time the operations stay `submitted` (the transaction may still land).
 */
export async function sendBundle(context: SendBundleContext, relayer: RelayerLease, bundle: Bundle): Promise<Hash> {
  const { client, store, clock } = context;
  const hashes = bundle.entries.map((e) => e.userOpHash);
  const [fees, nonce] = await Promise.all([
    context.feeOracle.getGasPrice(),
    client.getTransactionCount({ address: relayer.address, blockTag: "pending" }),
  ]);
  const common = {
    chainId: context.chainId,
    to: bundle.entryPoint.address,
    data: bundle.data,
    gas: (bundle.gas * (100n + context.bundleGasLimitMarkup)) / 100n,
    nonce,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    ...(bundle.accessList ? { accessList: bundle.accessList } : {}),
  };
  const signed = await relayer.signTransaction(
    bundle.authorizationList.length > 0
      ? { ...common, type: "eip7702", authorizationList: bundle.authorizationList }
      : { ...common, type: "eip1559" },
  );
  const transactionHash = await context.submitter.submit(signed, {
    entryPoint: bundle.entryPoint.address,
    senders: bundle.entries.map((e) => e.userOperation.sender),
  });
  await store.markSubmitted(hashes, transactionHash, clock.now());
  for (const userOpHash of hashes) context.emit({ userOpHash, status: "submitted", transactionHash });
  context.logger.info("bundle submitted", { transactionHash, entryPoint: bundle.entryPoint.address, ops: hashes.length, relayer: relayer.address });

  let receipt: { status: string; blockHash: Hash; blockNumber: bigint; logs: readonly unknown[] };
  try {
    receipt = await client.waitForTransactionReceipt({ hash: transactionHash, timeout: context.receiptTimeoutMs });
  } catch (error) {
    context.logger.warn("bundle receipt not seen yet; operations stay submitted", { transactionHash, error: String(error) });
    return transactionHash;
  }
  const included = new Set<string>();
  for (const log of receipt.logs as RawLog[]) {
    if (log.address.toLowerCase() !== bundle.entryPoint.address.toLowerCase() || log.topics[0] !== userOperationEventTopic) continue;
    const { userOpHash, success } = decodeUserOperationEvent(log);
    if (!hashes.includes(userOpHash)) continue;
    included.add(userOpHash);
    await store.markIncluded(userOpHash, { transactionHash, blockHash: receipt.blockHash, blockNumber: receipt.blockNumber }, clock.now());
    context.emit({ userOpHash, status: "included", transactionHash, success });
  }
  const missing = hashes.filter((h) => !included.has(h));
  if (missing.length > 0) {
    const reason = receipt.status === "reverted" ? "bundle transaction reverted" : "not included by the bundle transaction";
    await store.markFailed(missing, reason, clock.now());
    for (const userOpHash of missing) context.emit({ userOpHash, status: "failed", reason, transactionHash });
  }
  context.logger.info("bundle mined", { transactionHash, blockNumber: receipt.blockNumber, included: included.size, failed: missing.length });
  return transactionHash;
}
