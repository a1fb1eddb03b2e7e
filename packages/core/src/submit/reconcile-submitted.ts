import type { Address, Hash } from "viem";
import type { EntryPointRegistry } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { PreconfirmationStore } from "../ports/preconfirmation-store.ts";
import { promisedBlockOf, settlePreconfirmation } from "../preconfirmation/settle-preconfirmation.ts";
import { type NodeTransaction, transactionInNode } from "../chain/transaction-in-node.ts";
import { findUserOperationEvent } from "../receipt/lookup.ts";
import { decodeUserOperationEvent, ignoredInitCodeTopic } from "../receipt/user-operation-event.ts";
import { getLogs } from "../chain/get-logs.ts";
import { deploysSender } from "../validation/deployment-override.ts";
import type { StatusListener } from "../status/status-change.ts";
import type { UserOperation } from "../userop/types.ts";

export interface ReconcileSubmittedContext {
  client: ChainClient;
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  clock: Clock;
  logger: Logger;
  emit: StatusListener;
  receiptLookupRange: bigint;
  /** Names this engine in claims. */
  claimant: string;
  claimLeaseMs: number;
  /** Called for each operation found included (reputation counts it); `factoryIgnored` when v0.9's EntryPoint ignored its factory (`IgnoredInitCode`). */
  onIncluded?: (entryPoint: Address, op: UserOperation, facts?: { factoryIgnored?: boolean }) => Promise<void>;
  /** Follow operations whose transaction is still pending in the node (the transaction tracker's `watch`). */
  watch: (transactionHash: Hash, entries: readonly MempoolEntry[], options?: { notBefore?: bigint; promised?: boolean }) => void;
  /** Promises made for adopted operations (by this engine before a restart, or by another): kept or broken here. */
  preconfirmations: Pick<PreconfirmationStore, "get" | "settle">;
  /** Whether this engine follows an operation already (the tracker's `follows`): those are left to it. */
  follows: (userOpHash: Hash) => boolean;
}

/** What one reconciliation pass found. */
export interface ReconcileSummary {
  included: number;
  requeued: number;
  /** Still pending in the node, or committed under a standing preconfirmation: left `submitted` and followed to their receipt. */
  stillPending: number;
}

/** Operations adopted per pass. */
const batch = 500;

/**
 * Reconcile `submitted` operations that no engine follows any more with the chain: after a
 * restart (those `previousClaimant` holds: the same engine's claims, at once), or after another
 * engine on the same database died (claims that lapsed). Each becomes `included` when its
 * `UserOperationEvent` is on chain, whatever transaction carried it; stays `submitted`, followed
 * by `watch`, while its transaction is pending in the node; and otherwise goes back to the pool
 * (never sent, dropped by the node, or mined without it), where bundling revalidates it. An
 * operation under a standing preconfirmation is kept by its event, else followed by `watch` as
 * its sequencer's commitment (its promised block may be yet to come).
 */
export async function reconcileSubmitted(
  context: ReconcileSubmittedContext,
  options: { previousClaimant?: string | undefined } = {},
): Promise<ReconcileSummary> {
  const { client, store, clock, logger, emit } = context;
  const summary: ReconcileSummary = { included: 0, requeued: 0, stillPending: 0 };
  const seen = new Set<Hash>();
  for (;;) {
    const adopted = (
      await store.adoptSubmitted({
        claimant: context.claimant,
        previousClaimant: options.previousClaimant,
        leaseMs: context.claimLeaseMs,
        now: clock.now(),
        limit: batch,
      })
    ).filter((e) => !seen.has(e.userOpHash) && !context.follows(e.userOpHash));
    if (adopted.length === 0) break;
    const transactions = new Map<Hash, Promise<NodeTransaction>>();
    const stillPending = new Map<Hash, { entries: MempoolEntry[]; promisedBlock?: bigint | undefined }>();
    const follow = (hash: Hash, entry: MempoolEntry, promisedBlock?: bigint) => {
      const followed = stillPending.get(hash) ?? { entries: [], promisedBlock };
      followed.entries.push(entry);
      stillPending.set(hash, followed);
      summary.stillPending++;
    };
    for (const entry of adopted) {
      seen.add(entry.userOpHash);
      const event = await findUserOperationEvent(context, entry.userOpHash);
      if (event) {
        const inclusion = { transactionHash: event.transactionHash, blockHash: event.blockHash, blockNumber: BigInt(event.blockNumber) };
        await store.markIncluded(entry.userOpHash, inclusion, clock.now());
        await settlePreconfirmation(context, entry.userOpHash, inclusion);
        emit({ userOpHash: entry.userOpHash, status: "included", transactionHash: event.transactionHash, success: decodeUserOperationEvent(event).success });
        await context.onIncluded?.(entry.entryPoint, entry.userOperation, { factoryIgnored: await factoryIgnored(context.client, entry, BigInt(event.blockNumber)) });
        summary.included++;
        continue;
      }
      const hash = entry.transactionHash;
      const promisedBlock = hash && (await promisedBlockOf(context, entry.userOpHash));
      if (hash && promisedBlock !== undefined) {
        follow(hash, entry, promisedBlock);
        continue;
      }
      if (hash && !transactions.has(hash)) {
        transactions.set(hash, transactionInNode(client, hash));
      }
      const transaction = hash ? await transactions.get(hash)! : null;
      if (hash && transaction && transaction.blockNumber === null) {
        follow(hash, entry);
        continue;
      }
      await store.requeue([entry.userOpHash], clock.now());
      emit({ userOpHash: entry.userOpHash, status: "pending", reason: "not on chain when reconciled; back in the pool", transactionHash: hash });
      summary.requeued++;
    }
    for (const [hash, { entries, promisedBlock }] of stillPending) {
      context.watch(hash, entries, promisedBlock === undefined ? {} : { notBefore: promisedBlock, promised: true });
    }
  }
  if (seen.size > 0) logger.info("submitted operations reconciled with the chain", { ...summary });
  return summary;
}

/**
 * Whether v0.9's EntryPoint ignored the factory of an operation included in block `blockNumber`
 * (`IgnoredInitCode`): one `eth_getLogs`, only for a v0.9 operation that carries a factory.
 */
async function factoryIgnored(client: ChainClient, entry: MempoolEntry, blockNumber: bigint): Promise<boolean> {
  if (entry.entryPointVersion !== "0.9" || !deploysSender(entry.userOperation)) return false;
  const logs = await getLogs(client, { address: entry.entryPoint, topics: [ignoredInitCodeTopic, entry.userOpHash], fromBlock: blockNumber, toBlock: blockNumber });
  return logs.length > 0;
}
