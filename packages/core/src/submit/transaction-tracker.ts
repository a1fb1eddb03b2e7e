import type { Address, Hash, Hex } from "viem";
import { bumpedFees, repaidFees } from "../bundle/bundle-fees.ts";
import { getLogs } from "../chain/get-logs.ts";
import { getTransactionReceipt, type RpcMinedLog, type RpcMinedReceipt } from "../chain/get-transaction-receipt.ts";
import { transactionInNode } from "../chain/transaction-in-node.ts";
import type { FeeOracle } from "../gas/fee-oracle.ts";
import type { BlockHead } from "../ports/block-source.ts";
import type { Inclusion, MempoolEntry } from "../ports/mempool-store.ts";
import type { PreconfirmationStore } from "../ports/preconfirmation-store.ts";
import type { RelayerLease } from "../ports/relayer-signer.ts";
import { settlePreconfirmation } from "../preconfirmation/settle-preconfirmation.ts";
import type { UserOperation } from "../userop/types.ts";
import type { MinedReceipt } from "../receipt/lookup.ts";
import { ignoredInitCodeTopic, userOperationEventTopic, userOperationOutcome } from "../receipt/user-operation-event.ts";
import { type SendBundleContext, type SentBundle, sendTransaction } from "./send-bundle.ts";
import { SendBundleError } from "./send-error.ts";
import { createCanonicalChain } from "./canonical-chain.ts";

/** How the tracker follows, replaces and gives up on bundles, and how far back lookups search (see docs/configuration.md). */
export interface TrackingSettings {
  /** Milliseconds between polls of the node for a new block. Default 500. */
  readonly blockPollingIntervalMs: number;
  /** Blocks a bundle transaction may stay unmined before it is replaced with higher fees. Default 3. */
  readonly replaceAfterBlocks: number;
  /** Percent each replacement raises both fees by; nodes require at least 10. Default 15. */
  readonly feeBumpPercent: number;
  /** Mined bundles an operation may be left out of (a reverted bundle, say) before it fails for good. Default 3. */
  readonly maxAttempts: number;
  /** Blocks a mined bundle is watched for reorgs before its inclusion counts as final. Default 12. */
  readonly reorgDepth: number;
  /** Blocks back that receipts, lookups and restarts search the chain for an operation's event. Default 1024. */
  readonly receiptLookupBlocks: number;
}

export interface TransactionTrackerParameters extends SendBundleContext {
  feeOracle: FeeOracle;
  settings: Pick<TrackingSettings, "replaceAfterBlocks" | "feeBumpPercent" | "maxAttempts" | "reorgDepth">;
  /** No replacement bids more than this per gas (`bundling.maxFeePerGas`). */
  maxFeePerGas: bigint | undefined;
  /** Names this engine in claims: the tracker renews the claims of what it follows. */
  claimant: string;
  claimLeaseMs: number;
  /** Called for each operation included on chain (reputation counts it); `factoryIgnored` when its logs show v0.9's `IgnoredInitCode`. */
  onIncluded?: (entryPoint: Address, op: UserOperation, facts?: { factoryIgnored?: boolean }) => Promise<void>;
  /** Where the promises of transactions watched with `promised` are kept or broken. */
  preconfirmations: Pick<PreconfirmationStore, "get" | "settle">;
}

/** How `TransactionTracker.watch` follows a transaction. */
export interface WatchOptions {
  notBefore?: bigint;
  promised?: boolean;
  relayer?: Pick<RelayerLease, "release"> | undefined;
}

/** Follows sent bundles block by block until each relayer nonce is settled. */
export interface TransactionTracker {
  /** Follow a bundle the engine just sent. Its relayer is released once its nonce is settled. */
  track(sent: SentBundle): void;
  /**
   * Follow `transactionHash`, carrying `entries`, to its receipt without holding its relayer:
   * for transactions pending in the node that this engine adopted (after a restart, say), or
   * that a sequencer committed to (not given up for gone before block `notBefore`). A committed
   * one's operations are also recognised in any other transaction, from block `notBefore` on
   * (a builder may wrap the bundle in a transaction of its own). With `promised`, their
   * preconfirmations are kept on inclusion by block `notBefore`, and broken once it passes without
   * them. A `relayer` the transaction was signed by is released once it is mined or gone.
   */
  watch(transactionHash: Hash, entries: readonly MempoolEntry[], options?: WatchOptions): void;
  /** Check every followed bundle against a new head: receipts, replacements, cancellations. */
  onBlock(head: BlockHead): Promise<void>;
  /** Resolves once the bundle first sent as `transactionHash` is settled (immediately if unknown). */
  settled(transactionHash: Hash): Promise<void>;
  /** How many bundles are being followed. */
  readonly size: number;
  /** Whether the tracker follows `userOpHash` now (in a bundle it sent or a transaction it watches). */
  follows(userOpHash: Hash): boolean;
  /**
   * The receipt of a transaction in which the tracker recorded operations included, kept so
   * receipt lookups need not read it from the node again; undefined once it left the canonical
   * chain as far as the tracker saw, or was forgotten (the latest `MINED_RECEIPTS_KEPT_OPS`
   * operations' receipts are kept). `head` is the latest block the tracker followed.
   */
  minedReceipt(transactionHash: Hash): MinedReceipt | undefined;
}

/** Receipts of mined bundles are kept for the latest this many included operations. */
export const MINED_RECEIPTS_KEPT_OPS = 4096;

interface Tracked {
  sent: SentBundle;
  done: () => void;
  settled: Promise<void>;
}

/** A transaction followed to its receipt without its relayer. */
interface Watched {
  transactionHash: Hash;
  entryPoint: Address;
  entries: MempoolEntry[];
  /** Not given up for gone before this block (a sequencer's commitment may reach the node later). */
  notBefore: bigint;
  /** For a sequencer's commitment: the next block whose logs are searched for the operations. */
  scanFrom?: bigint | undefined;
  /** Its operations were preconfirmed for block `notBefore`. */
  promised: boolean;
  /** Held until the transaction is mined or gone (a proposal signed with one of the service's relayers). */
  relayer?: Pick<RelayerLease, "release"> | undefined;
}

/** A mined bundle watched until it is `reorgDepth` blocks deep. */
interface Confirming {
  transactionHash: Hash;
  blockHash: Hash;
  blockNumber: bigint;
  /** The operations it included. */
  included: Hash[];
}

/**
 * The transaction tracker: the one module that owns sent bundles. At each new block it looks for
 * the receipt of any transaction sent at each bundle's nonce; marks operations with a
 * `UserOperationEvent` included and puts the others back in the pool (a bundle that reverted
 * loses no operation; `maxAttempts` bounds the retries); replaces a bundle left unmined
 * for `replaceAfterBlocks` with higher fees; cancels it with a zero-value transfer to the
 * relayer itself when its operations no longer repay the fees it would need; releases the
 * relayer only once its nonce is taken on chain; and watches mined bundles for `reorgDepth`
 * blocks, taking their operations back when their block leaves the canonical chain. It keeps the
 * receipts it read of mined bundles, so receipt lookups need not read them again.
 */
export function createTransactionTracker(parameters: TransactionTrackerParameters): TransactionTracker {
  const { client, store, clock, logger, emit, feeOracle, settings, maxFeePerGas } = parameters;
  const settlePromise = (userOpHash: Hash, promisedBlock: bigint, inclusion: Inclusion | undefined) =>
    settlePreconfirmation(parameters, userOpHash, inclusion, promisedBlock);
  const tracked = new Map<Hash, Tracked>();
  const confirming = new Map<Hash, Confirming>();
  /** Blocks known canonical from the heads' parent hashes: mined bundles in them need no receipt read. */
  const chain = createCanonicalChain(settings.reorgDepth);
  /** Transactions followed by their hash: adopted after a restart, back in the node's pool after a reorg, or committed by a sequencer. */
  const watched = new Map<Hash, Watched>();

  function watch(transactionHash: Hash, entries: readonly MempoolEntry[], options: WatchOptions = {}) {
    const first = entries[0];
    const { notBefore = 0n, promised = false, relayer } = options;
    if (!first) return relayer?.release();
    // Watched again (adopted by reconciliation, say): a relayer it holds stays held until it settles.
    const held = relayer ?? watched.get(transactionHash)?.relayer;
    watched.set(transactionHash, { transactionHash, entryPoint: first.entryPoint, entries: [...entries], notBefore, scanFrom: options.notBefore, promised, relayer: held });
  }
  /** No longer followed: the relayer it held is free. */
  function unwatch(watchedTx: Watched) {
    watched.delete(watchedTx.transactionHash);
    watchedTx.relayer?.release();
  }
  /** Mined bundles each operation was left out of. */
  const attempts = new Map<Hash, number>();
  /** Receipts of transactions that included operations, oldest first, with how many each included. */
  const minedReceipts = new Map<Hash, { receipt: RpcMinedReceipt; included: number }>();
  let keptOps = 0;
  /** The latest block a pass of the tracker completed. */
  let lastHead: bigint | undefined;
  /** The latest head handed to `onBlock`, whether or not its pass has started. */
  let seenHead: BlockHead | undefined;
  function keepReceipt(receipt: RpcMinedReceipt, included: number) {
    forgetReceipt(receipt.transactionHash);
    minedReceipts.set(receipt.transactionHash, { receipt, included });
    keptOps += included;
    for (const hash of minedReceipts.keys()) {
      if (keptOps <= MINED_RECEIPTS_KEPT_OPS || hash === receipt.transactionHash) break;
      forgetReceipt(hash);
    }
  }
  function forgetReceipt(transactionHash: Hash) {
    keptOps -= minedReceipts.get(transactionHash)?.included ?? 0;
    minedReceipts.delete(transactionHash);
  }
  let running: Promise<void> = Promise.resolve();
  let renewedAt = Number.NEGATIVE_INFINITY;

  /** Keep the claims of followed operations alive, a few times per lease, so no other engine adopts them. */
  async function renewClaims() {
    const now = clock.now();
    if (now - renewedAt < parameters.claimLeaseMs / 4 || tracked.size + watched.size === 0) return;
    renewedAt = now;
    const hashes = [
      ...[...tracked.values()].flatMap(({ sent }) => sent.bundle.entries.map((e) => e.userOpHash)),
      ...[...watched.values()].flatMap(({ entries }) => entries.map((e) => e.userOpHash)),
    ];
    await store.renewClaims(hashes, parameters.claimant, now + parameters.claimLeaseMs);
  }

  async function receiptOf(hash: Hash): Promise<RpcMinedReceipt | null> {
    return getTransactionReceipt(client, hash);
  }

  function settle(key: Hash, entry: Tracked) {
    tracked.delete(key);
    entry.sent.relayer.release();
    entry.done();
  }

  /**
   * Operations of `entries` (on `entryPoint`) whose `UserOperationEvent` is among `logs` are
   * included, whatever transaction emitted it, and watched for reorgs; a promise made for block
   * `promisedBlock` is kept (or broken, when later). Resolves with their hashes.
   */
  async function include(entryPoint: Address, entries: readonly MempoolEntry[], logs: readonly RpcMinedLog[], promisedBlock?: bigint) {
    const byHash = new Map(entries.map((e) => [e.userOpHash, e]));
    const included = new Set<Hash>();
    const ignoredFactories = factoryIgnoredOperations(entryPoint, logs);
    const fromEntryPoint = entryPointLogs(entryPoint);
    for (const log of logs) {
      if (log.topics[0] !== userOperationEventTopic || !fromEntryPoint(log)) continue;
      const { userOpHash, success } = userOperationOutcome(log);
      const entry = byHash.get(userOpHash);
      if (!entry || included.has(userOpHash)) continue;
      included.add(userOpHash);
      const inclusion = { transactionHash: log.transactionHash, blockHash: log.blockHash, blockNumber: BigInt(log.blockNumber) };
      await store.markIncluded(userOpHash, inclusion, clock.now());
      attempts.delete(userOpHash);
      if (promisedBlock !== undefined) await settlePromise(userOpHash, promisedBlock, inclusion);
      emit({ userOpHash, status: "included", transactionHash: inclusion.transactionHash, success });
      const factoryIgnored = ignoredFactories.size > 0 && ignoredFactories.has(userOpHash.toLowerCase());
      await parameters.onIncluded?.(entryPoint, entry.userOperation, { factoryIgnored });
      const mined = confirming.get(inclusion.transactionHash);
      if (mined) mined.included.push(userOpHash);
      else confirming.set(inclusion.transactionHash, { ...inclusion, included: [userOpHash] });
    }
    return included;
  }

  /**
   * Record what a mined transaction did to `entries` (operations on `entryPoint`): those with a
   * `UserOperationEvent` are included (and watched for reorgs); the others go back to the pool.
   */
  async function recordReceipt(entryPoint: Address, entries: readonly MempoolEntry[], receipt: RpcMinedReceipt, why: string, promisedBlock?: bigint) {
    const included = await include(entryPoint, entries, receipt.logs, promisedBlock);
    if (included.size > 0) keepReceipt(receipt, included.size);
    const leftOut = entries.filter((e) => !included.has(e.userOpHash)).map((e) => e.userOpHash);
    if (promisedBlock !== undefined) for (const userOpHash of leftOut) await settlePromise(userOpHash, promisedBlock, undefined);
    await leaveOut(leftOut, why, receipt.transactionHash);
    logger.info("bundle mined", {
      transactionHash: receipt.transactionHash,
      blockNumber: BigInt(receipt.blockNumber),
      included: included.size,
      requeued: leftOut.length,
    });
  }

  /** The nonce is taken by `receipt`: record what it did to the bundle's operations. */
  async function mined(entry: Tracked, receipt: RpcMinedReceipt) {
    const { bundle, cancelled, transactionHashes } = entry.sent;
    const why = cancelled && receipt.transactionHash === transactionHashes.at(-1)
      ? "its bundle was cancelled"
      : receipt.status === "0x0"
        ? "its bundle transaction reverted"
        : "its bundle transaction was mined without it";
    await recordReceipt(bundle.entryPoint.address, bundle.entries, receipt, why);
  }

  /**
   * A transaction this engine did not send (or no longer holds the relayer of), followed until
   * mined or gone. A sequencer's commitment is also looked for in the logs of every block from
   * the promised one on: its operations count as included whatever transaction carried them.
   */
  async function followWatched(watchedTx: Watched, head: BlockHead) {
    const promisedBlock = watchedTx.promised ? watchedTx.notBefore : undefined;
    if (watchedTx.scanFrom !== undefined && head.number >= watchedTx.scanFrom) {
      const logs = await getLogs(client, {
        address: watchedTx.entryPoint,
        topics: [[userOperationEventTopic, ignoredInitCodeTopic], watchedTx.entries.map((e) => e.userOpHash)],
        fromBlock: watchedTx.scanFrom,
        toBlock: head.number,
      });
      watchedTx.scanFrom = head.number + 1n;
      const included = await include(watchedTx.entryPoint, watchedTx.entries, logs, promisedBlock);
      watchedTx.entries = watchedTx.entries.filter((e) => !included.has(e.userOpHash));
      if (watchedTx.entries.length === 0) return unwatch(watchedTx);
    }
    const receipt = await receiptOf(watchedTx.transactionHash);
    if (receipt) {
      unwatch(watchedTx);
      return recordReceipt(watchedTx.entryPoint, watchedTx.entries, receipt, "its bundle transaction was mined without it", promisedBlock);
    }
    if (head.number < watchedTx.notBefore) return;
    const hashes = watchedTx.entries.map((e) => e.userOpHash);
    if (promisedBlock !== undefined) {
      watchedTx.promised = false;
      for (const userOpHash of hashes) await settlePromise(userOpHash, promisedBlock, undefined);
    }
    if (await pendingInNode(watchedTx.transactionHash)) return;
    unwatch(watchedTx);
    await store.requeue(hashes, clock.now());
    for (const userOpHash of hashes) emit({ userOpHash, status: "pending", reason: "its bundle transaction left the node; back in the pool" });
  }

  async function anyKnownToNode(hashes: readonly Hash[]): Promise<boolean> {
    for (const hash of hashes) if (await transactionInNode(client, hash)) return true;
    return false;
  }

  async function pendingInNode(hash: Hash): Promise<boolean> {
    const transaction = await transactionInNode(client, hash);
    return transaction !== null && transaction.blockNumber === null;
  }

  /** Operations a mined transaction did not include go back to the pool, or fail after `maxBundleAttempts`. */
  async function leaveOut(userOpHashes: Hash[], why: string, transactionHash: Hash | undefined) {
    const requeued: Hash[] = [];
    const failed: Hash[] = [];
    for (const userOpHash of userOpHashes) {
      const count = (attempts.get(userOpHash) ?? 0) + 1;
      attempts.set(userOpHash, count);
      (count >= settings.maxAttempts ? failed : requeued).push(userOpHash);
    }
    if (requeued.length > 0) {
      await store.requeue(requeued, clock.now());
      for (const userOpHash of requeued) emit({ userOpHash, status: "pending", reason: `${why}; back in the pool`, transactionHash });
    }
    if (failed.length > 0) {
      const reason = `${why} (${settings.maxAttempts} bundles mined without it)`;
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
    const next = bumpedFees(sent.transaction, await feeOracle.getGasPrice(), BigInt(settings.feeBumpPercent));
    const repaid = repaidFees(sent.bundle.entries.map((e) => e.userOperation));
    const feeCap = maxFeePerGas !== undefined && maxFeePerGas < repaid.maxFeePerGas ? maxFeePerGas : repaid.maxFeePerGas;
    const cancel = sent.cancelled || next.maxFeePerGas > feeCap || next.maxPriorityFeePerGas > repaid.maxPriorityFeePerGas;
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

  /**
   * A mined bundle whose receipt moved: re-mined in another block, its operations' inclusion
   * follows; gone from the canonical chain, they go back to `submitted` while the transaction is
   * pending again (reconciliation follows it), else to the pool to be bundled again.
   */
  async function confirm(watched: Confirming, head: BlockHead) {
    if (head.number - watched.blockNumber >= BigInt(settings.reorgDepth)) {
      confirming.delete(watched.transactionHash);
      return;
    }
    if (chain.holds(watched.blockNumber, watched.blockHash)) return;
    const receipt = await receiptOf(watched.transactionHash);
    if (receipt?.blockHash === watched.blockHash) return;
    if (receipt) {
      const inclusion = { transactionHash: receipt.transactionHash, blockHash: receipt.blockHash, blockNumber: BigInt(receipt.blockNumber) };
      for (const userOpHash of watched.included) await store.markIncluded(userOpHash, inclusion, clock.now());
      Object.assign(watched, { blockHash: inclusion.blockHash, blockNumber: inclusion.blockNumber });
      keepReceipt(receipt, watched.included.length);
      return;
    }
    confirming.delete(watched.transactionHash);
    forgetReceipt(watched.transactionHash);
    const reason = "its block left the canonical chain";
    if (await pendingInNode(watched.transactionHash)) {
      // Unclaimed once included: a peer may adopt them too; both record the same receipt.
      await store.markSubmitted(watched.included, watched.transactionHash, clock.now());
      const entries = (await Promise.all(watched.included.map((hash) => store.get(hash)))).filter((e) => e !== undefined);
      watch(watched.transactionHash, entries);
      for (const userOpHash of watched.included) emit({ userOpHash, status: "submitted", transactionHash: watched.transactionHash, reason });
    } else {
      await store.requeue(watched.included, clock.now());
      for (const userOpHash of watched.included) emit({ userOpHash, status: "pending", reason: `${reason}; back in the pool` });
    }
    logger.warn("bundle reorged out", { transactionHash: watched.transactionHash, blockNumber: watched.blockNumber, ops: watched.included.length });
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
      // A node may count the nonce before it serves the receipt of the transaction that took it
      // (anvil does, while it mines): as long as it still knows one of ours, the next pass decides.
      if (await anyKnownToNode(sent.transactionHashes)) return;
      await leaveOut(sent.bundle.entries.map((e) => e.userOpHash), "its bundle's nonce was taken by another transaction", undefined);
      logger.warn("bundle nonce taken by another transaction", { relayer: sent.relayer.address, nonce: sent.transaction.nonce });
      return settle(key, entry);
    }
    if (head.number - sent.sentAtBlock >= BigInt(settings.replaceAfterBlocks)) await replace(entry, head);
  }

  const followLogged = (key: Hash, entry: Tracked, head: BlockHead) =>
    follow(key, entry, head).catch((error) => logger.error("could not follow a bundle transaction", { transactionHash: key, error: String(error) }));

  return {
    watch,

    track(sent) {
      let done!: () => void;
      const settled = new Promise<void>((resolve) => {
        done = resolve;
      });
      const key = sent.transactionHashes[0]!;
      const entry = { sent, done, settled };
      tracked.set(key, entry);
      // A head past the one it was sent at may have come (its pass begun without it) while it was
      // sent: on a chain that mines on demand no other block would come to look for its receipt.
      const head = seenHead;
      if (head && head.number > sent.sentAtBlock) {
        running = running.then(() => (tracked.get(key) === entry ? followLogged(key, entry, head) : undefined));
      }
    },

    onBlock(head) {
      seenHead = head;
      // One pass at a time: a slow node must not have two passes replace the same bundle.
      running = running.then(async () => {
        chain.advance(head);
        await renewClaims().catch((error) => logger.warn("could not renew claims", { error: String(error) }));
        await Promise.all([
          ...[...watched.values()].map((w) =>
            followWatched(w, head).catch((error) =>
              logger.error("could not follow a bundle transaction", { transactionHash: w.transactionHash, error: String(error) }),
            ),
          ),
          ...[...confirming.values()].map((watched) =>
            confirm(watched, head).catch((error) =>
              logger.error("could not check a mined bundle for reorgs", { transactionHash: watched.transactionHash, error: String(error) }),
            ),
          ),
          ...[...tracked].map(([key, entry]) => followLogged(key, entry, head)),
        ]);
        lastHead = head.number;
      });
      return running;
    },

    settled: (transactionHash) => tracked.get(transactionHash)?.settled ?? Promise.resolve(),

    get size() {
      return tracked.size;
    },

    minedReceipt(transactionHash) {
      const kept = minedReceipts.get(transactionHash);
      if (!kept || lastHead === undefined) return undefined;
      return { receipt: kept.receipt, head: lastHead };
    },

    follows(userOpHash) {
      const key = userOpHash.toLowerCase();
      const has = (entries: readonly MempoolEntry[]) => entries.some((e) => e.userOpHash.toLowerCase() === key);
      return [...tracked.values()].some(({ sent }) => has(sent.bundle.entries)) || [...watched.values()].some(({ entries }) => has(entries));
    },
  };
}

/** Whether a log was emitted by `entryPoint`, in any letter case; its lower case is built once, not per log. */
function entryPointLogs(entryPoint: Address): (log: { address: Address }) => boolean {
  const lower = entryPoint.toLowerCase();
  return (log) => log.address === entryPoint || log.address.toLowerCase() === lower;
}

/**
 * The hashes (in lower case) of the operations whose factory `entryPoint` ignored, by its v0.9
 * `IgnoredInitCode` events among `logs`: read once per receipt rather than searched again for
 * each operation it included.
 */
function factoryIgnoredOperations(entryPoint: Address, logs: readonly RpcMinedLog[]): Set<string> {
  const ignored = new Set<string>();
  const fromEntryPoint = entryPointLogs(entryPoint);
  for (const log of logs) {
    const userOpHash = log.topics[1];
    if (log.topics[0] === ignoredInitCodeTopic && userOpHash !== undefined && fromEntryPoint(log)) ignored.add(userOpHash.toLowerCase());
  }
  return ignored;
}
