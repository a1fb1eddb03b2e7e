import type { Hash, TransactionSerializable } from "viem";
import type { Bundle } from "../bundle/build-bundle.ts";
import type { BundleFees } from "../bundle/bundle-fees.ts";
import { bundleTransaction } from "../bundle/bundle-transaction.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { RelayerLease } from "../ports/relayer-signer.ts";
import type { Submitter } from "../ports/submitter.ts";
import type { StatusListener } from "../status/status-change.ts";
import { classifySendError, SendBundleError } from "./send-error.ts";
import { toSignedTransaction } from "./signed-transaction.ts";

export interface SendBundleContext {
  client: ChainClient;
  chainId: number;
  store: MempoolStore;
  submitter: Submitter;
  clock: Clock;
  logger: Logger;
  emit: StatusListener;
  /** Percent added to the bundle's gas for the transaction's gas limit (`bundling.gasLimitMarkupPercent`). */
  gasLimitMarkupPercent: number;
}

/** A bundle transaction on its way: what the transaction tracker follows until its nonce is settled. */
export interface SentBundle {
  bundle: Bundle;
  /** Held until the nonce is settled (mined, or taken by a cancellation). */
  relayer: RelayerLease;
  /** The transaction last signed at this nonce: the bundle call, or a cancellation. */
  transaction: TransactionSerializable & { nonce: number; gas: bigint } & BundleFees;
  /** Every transaction hash sent at this nonce, oldest first: any of them may be the one mined. */
  transactionHashes: Hash[];
  /** The block the last of them was sent at. */
  sentAtBlock: bigint;
  /** Replaced by a zero-value transfer to the relayer itself: its operations no longer pay for it. */
  cancelled: boolean;
}

export interface SendBundleParameters {
  bundle: Bundle;
  relayer: RelayerLease;
  fees: BundleFees;
  /** The head the bundle was built on: its gas limit caps the transaction's. */
  head: { number: bigint; gasLimit: bigint };
}

/**
 * Sign `bundle` with the leased relayer at its next nonce and hand it to the submitter. The
 * store records the transaction hash before the transaction leaves (so a crash at any moment
 * leaves a hash to reconcile with the chain), and takes the operations back to the pool when the
 * node refuses it (`SendBundleError`, with what the refusal means).
 */
export async function sendBundle(context: SendBundleContext, parameters: SendBundleParameters): Promise<SentBundle> {
  const { client, clock, store } = context;
  const { bundle, relayer, fees, head } = parameters;
  const hashes = bundle.entries.map((e) => e.userOpHash);
  const nonce = await client.getTransactionCount({ address: relayer.address, blockTag: "pending" });
  const transaction = {
    ...bundleTransaction(bundle, { chainId: context.chainId, fees, gasLimitMarkupPercent: context.gasLimitMarkupPercent, maxGas: head.gasLimit }),
    nonce,
  };
  const sent: SentBundle = { bundle, relayer, transaction, transactionHashes: [], sentAtBlock: head.number, cancelled: false };
  try {
    await sendTransaction(context, sent, transaction);
  } catch (error) {
    await store.requeue(hashes, clock.now());
    throw error;
  }
  for (const userOpHash of hashes) context.emit({ userOpHash, status: "submitted", transactionHash: sent.transactionHashes[0] });
  context.logger.info("bundle submitted", {
    transactionHash: sent.transactionHashes[0],
    entryPoint: bundle.entryPoint.address,
    ops: hashes.length,
    relayer: relayer.address,
    nonce,
  });
  return sent;
}

/**
 * Sign and submit `transaction` (the bundle, a replacement at the same nonce, or a cancellation)
 * and add its hash to `sent`. A bundle call is recorded in the store first; "already known"
 * counts as sent. Throws `SendBundleError` for any other refusal.
 */
export async function sendTransaction(context: SendBundleContext, sent: SentBundle, transaction: SentBundle["transaction"]): Promise<Hash> {
  const signed = toSignedTransaction(await sent.relayer.signTransaction(transaction));
  const transactionHash = signed.hash;
  const carriesBundle = transaction.to === sent.bundle.entryPoint.address;
  if (carriesBundle) {
    await context.store.markSubmitted(sent.bundle.entries.map((e) => e.userOpHash), transactionHash, context.clock.now());
  }
  try {
    await context.submitter.submit(signed, {
      entryPoint: sent.bundle.entryPoint.address,
      senders: sent.bundle.entries.map((e) => e.userOperation.sender),
      userOpHashes: sent.bundle.entries.map((e) => e.userOpHash),
    });
  } catch (error) {
    const kind = classifySendError(error);
    if (kind !== "already-known") throw new SendBundleError(kind, error);
  }
  sent.transaction = transaction;
  sent.transactionHashes.push(transactionHash);
  return transactionHash;
}
