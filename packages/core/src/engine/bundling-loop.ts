import type { Hash } from "viem";
import type { EntryPoint, EntryPointRegistry } from "../entrypoint/registry.ts";
import type { BlockSource } from "../ports/block-source.ts";
import { type Clock, sleep } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { StatusListener } from "../status/status-change.ts";
import { type ReconcileSubmittedContext, reconcileSubmitted } from "../submit/reconcile-submitted.ts";
import type { TransactionTracker } from "../submit/transaction-tracker.ts";
import type { BundleSender } from "./bundle-sender.ts";
import { createScheduler } from "./scheduler.ts";
import type { BundlingMode } from "./settings.ts";

/** Run-time state of bundling: how it starts and how often. `setBundlingMode` and `setBundleInterval` change it. */
export interface BundlingState {
  mode: BundlingMode;
  intervalMs: number;
}

export interface BundlingLoopContext {
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  blocks: BlockSource;
  tracker: TransactionTracker;
  bundleSender: BundleSender;
  clock: Clock;
  logger: Logger;
  emit: StatusListener;
  state: BundlingState;
  /** Reconciles sent operations with the chain (this engine's claims as `claimant`). */
  reconcile: ReconcileSubmittedContext;
  /** The pool's upkeep before each bundling run. */
  housekeeping: (now: number) => Promise<void>;
  /** `tracking.blockPollingIntervalMs`: how often the tracker is driven while waiting. */
  pollIntervalMs: number;
  /** `bundling.receiptTimeoutMs`: how long `sendBundleNow` waits for its bundles to be mined. */
  receiptTimeoutMs: number;
}

/**
 * The push path's driver: on each tick (every `state.intervalMs`), reconcile what was sent with
 * the chain, keep the pool, and bundle on every EntryPoint when the mode is `auto`;
 * `sendBundleNow` does one tick on demand and waits for the bundles to be mined. No bundle goes
 * out before the first reconciliation: an operation in flight must not be sent twice.
 */
export function createBundlingLoop(context: BundlingLoopContext) {
  const { store, clock, logger, tracker, blocks } = context;
  const claimant = context.reconcile.claimant;
  /** Before the first bundle, this engine's own earlier claims (a restart); afterwards, lapsed ones (a dead peer). */
  let reconciled = false;
  let stopping = false;
  let unsubscribeBlocks: (() => void) | undefined;
  let earlierClaimsReleased: Promise<void> | undefined;

  /**
   * Once, before this engine claims anything: the operations it claimed before a restart and
   * never sent go back to the pool. Claims it made since (a proposal pulled before the first
   * tick, say) are its own to keep.
   */
  function releaseEarlierClaims(): Promise<void> {
    earlierClaimsReleased ??= (async () => {
      for (const userOpHash of await store.releaseClaims(claimant, clock.now())) {
        context.emit({ userOpHash, status: "pending", reason: "claimed for a bundle before a restart and never sent; back in the pool" });
      }
    })().catch((error) => {
      earlierClaimsReleased = undefined;
      throw error;
    });
    return earlierClaimsReleased;
  }

  async function reconcile() {
    await releaseEarlierClaims();
    await reconcileSubmitted(context.reconcile, { previousClaimant: reconciled ? undefined : claimant });
    reconciled = true;
  }

  /** Start a bundling run on every EntryPoint (joining runs already going). */
  function bundleAll(): Promise<Hash[]>[] {
    return context.entryPoints.all.map((entryPoint: EntryPoint) =>
      context.bundleSender.run(entryPoint).catch((error) => {
        logger.error("bundle failed", { entryPoint: entryPoint.address, error: String(error) });
        return [];
      }),
    );
  }

  /** Drive the tracker from the latest block until `done` settles, or `until` (engine clock) passes. */
  async function driveTracker(done: Promise<unknown>, until = Number.POSITIVE_INFINITY) {
    let settled = false;
    const watched = done.finally(() => {
      settled = true;
    });
    while (!settled && clock.now() < until) {
      await tracker.onBlock(await blocks.latest());
      if (!settled) await Promise.race([watched, sleep(clock, Math.min(context.pollIntervalMs, 100))]);
    }
  }

  const scheduler = createScheduler({
    clock,
    interval: () => context.state.intervalMs,
    async task() {
      try {
        await reconcile();
      } catch (error) {
        logger.error("could not reconcile submitted operations with the chain", { error: String(error) });
        if (!reconciled) return;
      }
      await context.housekeeping(clock.now()).catch((error) => logger.error("housekeeping failed", { error: String(error) }));
      if (context.state.mode === "auto") bundleAll();
    },
  });

  return {
    /** True once `stop` was called: bundling runs end instead of starting another bundle. */
    stopped: () => stopping,

    releaseEarlierClaims,

    /** Bundle whatever is pending now and wait (up to `receiptTimeoutMs`) for the bundles to be mined. */
    async sendBundleNow(): Promise<Hash[]> {
      await reconcile();
      await context.housekeeping(clock.now());
      // Runs wait for relayers whose bundles are still unmined: drive the tracker while they go.
      const runs = Promise.all(bundleAll());
      await driveTracker(runs);
      const sent = (await runs).flat();
      await driveTracker(Promise.all(sent.map((hash) => tracker.settled(hash))), clock.now() + context.receiptTimeoutMs);
      return sent;
    },

    /** Apply a changed `state.intervalMs` from now on. */
    reschedule: () => scheduler.reschedule(),

    start() {
      stopping = false;
      unsubscribeBlocks ??= blocks.subscribe((block) => {
        tracker.onBlock(block).catch((error) => logger.error("could not follow bundles", { error: String(error) }));
      });
      scheduler.start();
    },

    /** Stop ticking and wait for the tick and the bundling runs in progress. */
    async stop() {
      stopping = true;
      unsubscribeBlocks?.();
      unsubscribeBlocks = undefined;
      await scheduler.stop();
      await context.bundleSender.inProgress();
    },
  };
}
