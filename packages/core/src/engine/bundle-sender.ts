import type { Address, Hash } from "viem";
import type { FailureReason } from "../errors/failure-reason.ts";
import type { EntityRole } from "../userop/entities.ts";
import type { UserOperation } from "../userop/types.ts";
import type { RejectedEntry } from "../bundle/build-bundle.ts";
import { type ProposeBundleContext, type ProposedBundle, proposeBundle } from "../bundle/propose-bundle.ts";
import type { EntryPoint, EntryPointRegistry } from "../entrypoint/registry.ts";
import type { BlockSource } from "../ports/block-source.ts";
import { type Clock, sleep } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import { userOperationOutcome } from "../receipt/user-operation-event.ts";
import { findUserOperationEvent } from "../receipt/lookup.ts";
import { accountableEntity, type Reputation } from "../reputation/reputation.ts";
import type { StatusListener } from "../status/status-change.ts";
import { type SendBundleContext, sendBundle } from "../submit/send-bundle.ts";
import { SendBundleError } from "../submit/send-error.ts";
import type { TransactionTracker } from "../submit/transaction-tracker.ts";
import type { RelayerPool } from "./relayer-pool.ts";
import type { BundlingSettings } from "../bundle/bundling-settings.ts";

/** Failed attempts one bundling run tolerates before it waits for the next. */
const failuresPerRun = 3;

export interface BundleSenderContext {
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  blocks: BlockSource;
  relayers: RelayerPool;
  tracker: TransactionTracker;
  reputation: Reputation;
  logger: Logger;
  emit: StatusListener;
  propose: ProposeBundleContext;
  send: SendBundleContext;
  receiptLookupRange: bigint;
  clock: Clock;
  /** Milliseconds between looks for a free relayer (`tracking.blockPollingIntervalMs`). */
  pollIntervalMs: number;
  /** `bundling.maxGas`, or what the chain's block holds. */
  maxBundleGas: bigint;
  settings: Pick<BundlingSettings, "maxOperations" | "beneficiary">;
  /** True once the engine stops: runs end instead of starting another bundle. */
  stopped: () => boolean;
}

/** Runs bundling on each EntryPoint: at most one run per EntryPoint at a time. */
export interface BundleSender {
  /**
   * Bundle what is pending on `entryPoint`: one bundle per free relayer, with disjoint operations,
   * waiting for a relayer's nonce to settle while operations remain. Resolves with the first
   * transaction hash of each bundle sent. A run already going on `entryPoint` is joined.
   */
  run(entryPoint: EntryPoint): Promise<Hash[]>;
  /** Every run in progress. */
  inProgress(): Promise<unknown>;
  /** Operations the simulation refused leave the pool (with reputation and a status event), unless the chain shows them included already. */
  settleRejected(entryPoint: EntryPoint, rejected: readonly RejectedEntry[]): Promise<void>;
}

export function createBundleSender(context: BundleSenderContext): BundleSender {
  const { store, relayers, logger } = context;
  const runs = new Map<EntryPoint, Promise<Hash[]>>();

  /** Operations the simulation refused leave the pool, unless the chain shows them included already. */
  async function settleRejected(entryPoint: EntryPoint, rejected: readonly RejectedEntry[]) {
    for (const { entry, reason, failure, stage } of rejected) {
      const now = context.propose.now();
      // AA25 (nonce), or AA10 (account deployed) for an operation that deploys it, may mean it is
      // on chain already: sent before a crash, or by another bundler.
      const event = failure.code === 25 || failure.code === 10 ? await findUserOperationEvent({ ...context, client: context.send.client }, entry.userOpHash) : undefined;
      if (event) {
        const inclusion = { transactionHash: event.transactionHash, blockHash: event.blockHash, blockNumber: BigInt(event.blockNumber) };
        await store.markIncluded(entry.userOpHash, inclusion, now);
        context.emit({ userOpHash: entry.userOpHash, status: "included", transactionHash: event.transactionHash, success: userOperationOutcome(event).success });
        continue;
      }
      await store.drop([entry.userOpHash], reason, now);
      const staked = entry.validation?.staked ?? [];
      await context.reputation.rejected(entryPoint.address, entry.userOperation, failure, staked);
      const blamed = stage === "simulation" && entry.validation ? bundleFailureCulprit(entry.userOperation, failure, staked) : undefined;
      if (blamed) await context.reputation.penalize(entryPoint.address, blamed);
      context.emit({ userOpHash: entry.userOpHash, status: "dropped", reason });
      logger.warn("operation dropped from bundle", { userOpHash: entry.userOpHash, reason });
    }
  }

  async function bundleEntryPoint(entryPoint: EntryPoint): Promise<Hash[]> {
    const sent: Hash[] = [];
    let maxOperations = context.settings.maxOperations;
    let failures = 0;
    /** Relayers the node found short of funds for a bundle in this run: the next one is tried. */
    const unfunded = new Set<`0x${string}`>();
    // Claimed operations count too: a claim whose engine died lapses back to claimable.
    const nothingPending = async () =>
      (await store.list("pending", { entryPoint: entryPoint.address, limit: 1 })).length === 0 &&
      (await store.list("bundling", { entryPoint: entryPoint.address, limit: 1 })).length === 0;
    while (!context.stopped() && failures < failuresPerRun) {
      // Pending operations first: an EntryPoint with nothing to bundle costs no balance read.
      if (await nothingPending()) break;
      const relayer = await relayers.lease(unfunded);
      if (!relayer) {
        if (relayers.held === 0) {
          logger.warn("no funded relayer is available; operations wait in the pool", { entryPoint: entryPoint.address });
          break;
        }
        // Released meanwhile, or soon: look again at the next release or after a poll interval.
        await Promise.race([relayers.released(), sleep(context.clock, context.pollIntervalMs)]);
        continue;
      }
      let proposal: ProposedBundle | undefined;
      try {
        const head = await context.blocks.latest();
        proposal = await proposeBundle(context.propose, {
          entryPoint,
          relayer: relayer.address,
          beneficiary: context.settings.beneficiary ?? relayer.address,
          head,
          gasBudget: context.maxBundleGas,
          maxOperations,
        });
        await settleRejected(entryPoint, proposal.rejected);
        const { bundle } = proposal;
        if (!bundle) {
          relayer.release();
          if (proposal.rejected.length > 0) continue; // the rest may still make a bundle
          break;
        }
        const bundleSent = await sendBundle(context.send, { bundle, relayer, fees: bundle.fees, head });
        context.tracker.track(bundleSent);
        sent.push(bundleSent.transactionHashes[0]!);
        maxOperations = context.settings.maxOperations;
      } catch (error) {
        relayer.release();
        failures++;
        const size = proposal?.bundle?.entries.length ?? 0;
        if (error instanceof SendBundleError && error.kind === "gas-limit" && size > 1) {
          maxOperations = Math.floor(size / 2);
          logger.warn("bundle too large for a block; splitting it", { entryPoint: entryPoint.address, ops: size });
          continue;
        }
        if (error instanceof SendBundleError && error.kind === "gas-limit" && proposal?.bundle) {
          const reason = "its gas exceeds what a block can hold";
          const [entry] = proposal.bundle.entries;
          await store.drop([entry!.userOpHash], reason, context.propose.now());
          context.emit({ userOpHash: entry!.userOpHash, status: "dropped", reason });
          continue;
        }
        if (error instanceof SendBundleError && error.kind === "insufficient-funds") {
          unfunded.add(relayer.address);
          logger.warn("relayer cannot pay for the bundle; trying another", { relayer: relayer.address });
          continue;
        }
        logger.error("bundle failed", { entryPoint: entryPoint.address, error: String(error) });
        if (!(error instanceof SendBundleError)) break;
      }
    }
    return sent;
  }

  return {
    run(entryPoint) {
      const existing = runs.get(entryPoint);
      if (existing) return existing;
      const job = bundleEntryPoint(entryPoint).finally(() => runs.delete(entryPoint));
      runs.set(entryPoint, job);
      return job;
    },
    inProgress: () => Promise.all(runs.values()),
    settleRejected,
  };
}

/**
 * GREP-040: the entity accountable (`accountableEntity`) for the failure that made the `handleOps`
 * simulation refuse an operation that had passed its second validation. Not for a nonce already
 * used (AA25, another bundler's inclusion) or a paymaster deposit spent by other operations (AA31,
 * a matter of deposit accounting); unstaked accounts are limited by their mempool count instead.
 */
function bundleFailureCulprit(op: UserOperation, failure: FailureReason, staked: readonly EntityRole[]): Address | undefined {
  if (failure.code === 25 || failure.code === 31) return undefined;
  const accountable = accountableEntity(op, failure, staked);
  // An unstaked account is limited by count, not reputation: there is nothing to ban.
  return accountable?.role === "account" && !staked.includes("account") ? undefined : accountable?.address;
}
