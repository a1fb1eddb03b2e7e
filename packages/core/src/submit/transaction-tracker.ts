import type { Address, Hash, Hex } from "viem";
import { bumpedFees, repaidFeeCap } from "../bundle/bundle-fees.ts";
import type { FeeOracle } from "../gas/fee-oracle.ts";
import type { BlockHead } from "../ports/block-source.ts";
import type { UserOperation } from "../userop/types.ts";
import { decodeUserOperationEvent, type RawLog, userOperationEventTopic } from "../receipt/user-operation-event.ts";
import { type SendBundleContext, type SentBundle, sendTransaction } from "./send-bundle.ts";
import { SendBundleError } from "./send-error.ts";

/** How the tracker replaces, cancels and gives up (see docs/configuration.md). */
export interface TransactionTrackerConfig {
  /** Blocks a bundle transaction may stay unmined before it is replaced with higher fees. */
  bundleReplaceAfterBlocks: number;
  /** Percent each replacement raises both fees by; nodes require at least 10. */
  bundleFeeBumpPercent: bigint;
  /** No bundle bids more than this per gas, however long it waits (besides what its operations repay). */
  maxBundleFeePerGas: bigint | undefined;
  /** Mined bundles an operation may be left out of (a reverted bundle, say) before it fails for good. */
  maxBundleAttempts: number;
}

export interface TransactionTrackerParameters extends SendBundleContext {
  feeOracle: FeeOracle;
  config: TransactionTrackerConfig;
  /** Names this engine in claims: the tracker renews the claims of what it follows. */
  claimant: string;
  claimLeaseMs: number;
  /** Called for each operation included on chain (reputation counts it). */
  onIncluded?: (entryPoint: Address, op: UserOperation) => Promise<void>;
}

/** Follows sent bundles block by block until each relayer nonce is settled. */
export interface TransactionTracker {
  /** Follow a bundle the engine just sent. Its relayer is released once its nonce is settled. */
  track(sent: SentBundle): void;
  /** Check every followed bundle against a new head: receipts, replacements, cancellations. */
  onBlock(head: BlockHead): Promise<void>;
  /** Resolves once the bundle first sent as `transactionHash` is settled (immediately if unknown). */
  settled(transactionHash: Hash): Promise<void>;
  /** How many bundles are being followed. */
  readonly size: number;
}

interface Tracked {
  sent: SentBundle;
  done: () => void;
  settled: Promise<void>;
}

/** A transaction receipt, as the node returns it. */
interface RawReceipt {
  transactionHash: Hash;
  status: Hex;
  blockHash: Hash;
  blockNumber: Hex;
  logs: RawLog[];
}

/**
 * The transaction tracker: the one module that owns sent bundles. At each new block it looks for
 * the receipt of any transaction sent at each bundle's nonce; marks operations with a
 * `UserOperationEvent` included and puts the others back in the pool (a bundle that reverted
 * loses no operation; `maxBundleAttempts` bounds the retries); replaces a bundle left unmined
 * for `bundleReplaceAfterBlocks` with higher fees; cancels it with a zero-value transfer to the
 * relayer itself when its operations no longer repay the fees it would need; and releases the
 * relayer only once its nonce is taken on chain.
 */
export function createTransactionTracker(parameters: TransactionTrackerParameters): TransactionTracker {
  const { client, store, clock, logger, emit, feeOracle, config } = parameters;
  const tracked = new Map<Hash, Tracked>();
  /** Mined bundles each operation was left out of. */
  const attempts = new Map<Hash, number>();
  let running: Promise<void> = Promise.resolve();
  let renewedAt = Number.NEGATIVE_INFINITY;

  /** Keep the claims of followed operations alive, a few times per lease, so no other engine adopts them. */
  async function renewClaims() {
    const now = clock.now();
    if (now - renewedAt < parameters.claimLeaseMs / 4 || tracked.size === 0) return;
    renewedAt = now;
    const hashes = [...tracked.values()].flatMap(({ sent }) => sent.bundle.entries.map((e) => e.userOpHash));
    await store.renewClaims(hashes, parameters.claimant, now + parameters.claimLeaseMs);
  }

  async function receiptOf(hash: Hash): Promise<RawReceipt | null> {
    return (await client.request({ method: "eth_getTransactionReceipt", params: [hash] } as never)) as RawReceipt | null;
  }

  function settle(key: Hash, entry: Tracked) {
    tracked.delete(key);
    entry.sent.relayer.release();
    entry.done();
  }

  /** The nonce is taken by `receipt`: record what it did to the bundle's operations. */
  async function mined(entry: Tracked, receipt: RawReceipt) {
    const { bundle } = entry.sent;
    const hashes = new Set(bundle.entries.map((e) => e.userOpHash));
    const included = new Set<Hash>();
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== bundle.entryPoint.address.toLowerCase() || log.topics[0] !== userOperationEventTopic) continue;
      const { userOpHash, success } = decodeUserOperationEvent(log);
      if (!hashes.has(userOpHash)) continue;
      included.add(userOpHash);
      const inclusion = { transactionHash: receipt.transactionHash, blockHash: receipt.blockHash, blockNumber: BigInt(receipt.blockNumber) };
      await store.markIncluded(userOpHash, inclusion, clock.now());
      attempts.delete(userOpHash);
      emit({ userOpHash, status: "included", transactionHash: receipt.transactionHash, success });
      const op = bundle.entries.find((e) => e.userOpHash === userOpHash)!.userOperation;
      await parameters.onIncluded?.(bundle.entryPoint.address, op);
    }
    const leftOut = bundle.entries.filter((e) => !included.has(e.userOpHash)).map((e) => e.userOpHash);
    const why = entry.sent.cancelled && receipt.transactionHash === entry.sent.transactionHashes.at(-1)
      ? "its bundle was cancelled"
      : receipt.status === "0x0"
        ? "its bundle transaction reverted"
        : "its bundle transaction was mined without it";
    await leaveOut(leftOut, why, receipt.transactionHash);
    logger.info("bundle mined", {
      transactionHash: receipt.transactionHash,
      blockNumber: BigInt(receipt.blockNumber),
      included: included.size,
      requeued: leftOut.length,
    });
  }

  /** Operations a mined transaction did not include go back to the pool, or fail after `maxBundleAttempts`. */
  async function leaveOut(userOpHashes: Hash[], why: string, transactionHash: Hash | undefined) {
    const requeued: Hash[] = [];
    const failed: Hash[] = [];
    for (const userOpHash of userOpHashes) {
      const count = (attempts.get(userOpHash) ?? 0) + 1;
      attempts.set(userOpHash, count);
      (count >= config.maxBundleAttempts ? failed : requeued).push(userOpHash);
    }
    if (requeued.length > 0) {
      await store.requeue(requeued, clock.now());
      for (const userOpHash of requeued) emit({ userOpHash, status: "pending", reason: `${why}; back in the pool`, transactionHash });
    }
    if (failed.length > 0) {
      const reason = `${why} (${config.maxBundleAttempts} bundles mined without it)`;
      await store.markFailed(failed, reason, clock.now());
      for (const userOpHash of failed) {
        attempts.delete(userOpHash);
        emit({ userOpHash, status: "failed", reason, transactionHash });
      }
    }
  }

  /** Replace the bundle with higher fees, or cancel it when its operations would not repay them. */
  async function replace(entry: Tracked, head: BlockHead) {
    const { sent } = entry;
    const next = bumpedFees(sent.transaction, await feeOracle.getGasPrice(), config.bundleFeeBumpPercent);
    const repaid = repaidFeeCap(sent.bundle.entries.map((e) => e.userOperation));
    const cap = config.maxBundleFeePerGas !== undefined && config.maxBundleFeePerGas < repaid ? config.maxBundleFeePerGas : repaid;
    const cancel = sent.cancelled || next.maxFeePerGas > cap;
    const transaction = cancel
      ? { chainId: sent.transaction.chainId, type: "eip1559" as const, to: sent.relayer.address, value: 0n, data: "0x" as Hex, gas: 21_000n, nonce: sent.transaction.nonce, ...next }
      : { ...sent.transaction, ...next };
    try {
      const hash = await sendTransaction(parameters, sent, transaction);
      sent.cancelled = cancel;
      logger.info(cancel ? "bundle cancelled: its operations do not repay higher fees" : "bundle replaced with higher fees", {
        transactionHash: hash,
        nonce: sent.transaction.nonce,
        maxFeePerGas: next.maxFeePerGas,
      });
    } catch (error) {
      if (!(error instanceof SendBundleError)) throw error;
      // underpriced: the next replacement raises further; nonce too low: the next block shows what took it.
      sent.transaction = { ...sent.transaction, ...next };
      logger.warn("bundle replacement refused", { nonce: sent.transaction.nonce, relayer: sent.relayer.address, kind: error.kind });
    }
    sent.sentAtBlock = head.number;
  }

  async function follow(key: Hash, entry: Tracked, head: BlockHead) {
    const { sent } = entry;
    // The nonce first: if it is taken and none of our transactions has a receipt after that, another took it.
    const taken = await client.getTransactionCount({ address: sent.relayer.address, blockTag: "latest" });
    for (const hash of [...sent.transactionHashes].reverse()) {
      const receipt = await receiptOf(hash);
      if (receipt) {
        await mined(entry, receipt);
        return settle(key, entry);
      }
    }
    if (taken > sent.transaction.nonce) {
      await leaveOut(sent.bundle.entries.map((e) => e.userOpHash), "its bundle's nonce was taken by another transaction", undefined);
      logger.warn("bundle nonce taken by another transaction", { relayer: sent.relayer.address, nonce: sent.transaction.nonce });
      return settle(key, entry);
    }
    if (head.number - sent.sentAtBlock >= BigInt(config.bundleReplaceAfterBlocks)) await replace(entry, head);
  }

  return {
    track(sent) {
      let done!: () => void;
      const settled = new Promise<void>((resolve) => {
        done = resolve;
      });
      tracked.set(sent.transactionHashes[0]!, { sent, done, settled });
    },

    onBlock(head) {
      // One pass at a time: a slow node must not have two passes replace the same bundle.
      running = running.then(async () => {
        await renewClaims().catch((error) => logger.warn("could not renew claims", { error: String(error) }));
        await Promise.all(
          [...tracked].map(([key, entry]) =>
            follow(key, entry, head).catch((error) =>
              logger.error("could not follow a bundle transaction", { transactionHash: key, error: String(error) }),
            ),
          ),
        );
      });
      return running;
    },

    settled: (transactionHash) => tracked.get(transactionHash)?.settled ?? Promise.resolve(),

    get size() {
      return tracked.size;
    },
  };
}
