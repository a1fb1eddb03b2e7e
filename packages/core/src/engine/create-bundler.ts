import { randomUUID } from "node:crypto";
import type { Address, Hash } from "viem";
import { defaultMaxBundleGas } from "../bundle/bundle-gas.ts";
import { createPollingBlockSource } from "../chain/polling-block-source.ts";
import { createEntryPointRegistry, type EntryPoint, type EntryPointRegistry } from "../entrypoint/registry.ts";
import { dummySignature, estimateUserOperationGas, type GasEstimate } from "../gas/estimate-user-operation-gas.ts";
import { createChainFeeOracle, type FeeOracle, type GasPrice } from "../gas/fee-oracle.ts";
import { type FeeHistory, getFeeHistory, type GetFeeHistoryParameters } from "../gas/get-fee-history.ts";
import { type L1DataCost, l1DataGas as l1DataGasOf } from "../gas/l1-data-cost.ts";
import type { PreVerificationGasConfig } from "../userop/pre-verification-gas.ts";
import { createDefaultMempoolPolicy } from "../mempool/default-mempool-policy.ts";
import { listInPool } from "../mempool/list-in-pool.ts";
import type { BlockSource } from "../ports/block-source.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { type Clock, sleep, systemClock } from "../ports/clock.ts";
import { type Logger, silentLogger } from "../ports/logger.ts";
import { redactingLogger } from "../redaction/redacting-logger.ts";
import type { Redactor } from "../redaction/redactor.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { RelayerSigner } from "../ports/relayer-signer.ts";
import type { ReputationEntry, ReputationStore } from "../ports/reputation-store.ts";
import type { Simulator } from "../ports/simulator.ts";
import type { Submitter } from "../ports/submitter.ts";
import {
  getUserOperationByHash,
  getUserOperationReceipt,
  type LookupContext,
  type UserOperationLookup,
  type UserOperationReceipt,
} from "../receipt/lookup.ts";
import { createReputation, type ReputationReport } from "../reputation/reputation.ts";
import { getStakeStatus, type StakeStatus } from "../reputation/stake.ts";
import { createStatusHub, type StatusListener } from "../status/status-change.ts";
import { createConfiguredSubmitter } from "../submit/configured-submitter.ts";
import { reconcileSubmitted } from "../submit/reconcile-submitted.ts";
import { createTransactionTracker } from "../submit/transaction-tracker.ts";
import { createMemoryReputationStore } from "../reputation/memory-reputation-store.ts";
import type { UserOperation } from "../userop/types.ts";
import { refuseMalleableAuthorization } from "../validation/check-authorization.ts";
import { createSimulator } from "../validation/create-simulator.ts";
import { deploysSender } from "../validation/deployment-override.ts";
import { refuseRedundantFactory, withQueuedNonce } from "../validation/queued-nonce.ts";
import { checkUserOperationSize } from "../validation/size-limits.ts";
import { mergeStateOverrides } from "../validation/state-override.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import { admitUserOperation } from "./admission.ts";
import { type BundleProposal, createBundlePuller, type ProposeBundleRequest } from "./bundle-puller.ts";
import { createBundleSender } from "./bundle-sender.ts";
import { createHousekeeping } from "./housekeeping.ts";
import { type BundlerConfig, resolveBundlerConfig } from "./config.ts";
import { createRelayerPool } from "./relayer-pool.ts";
import { createScheduler } from "./scheduler.ts";
import { createSimulationGate } from "./simulation-gate.ts";

export interface CreateBundlerParameters {
  /** Read access to the chain. */
  client: ChainClient;
  /** The L1 data fee an L2 charges on top of L2 gas, which operations must cover in preVerificationGas. Default: none (an L1). */
  l1DataCost?: L1DataCost;
  /** Durable mempool state. */
  store: MempoolStore;
  /** Who enters the pool and what goes into a bundle. Default: `createDefaultMempoolPolicy()` (ERC-4337/ERC-7562). */
  policy?: MempoolPolicy;
  /** ERC-7562 reputation counters. Default: in memory (they start afresh on restart). */
  reputation?: ReputationStore;
  /** Relayer accounts that send bundles. */
  signer: RelayerSigner;
  /** How bundles reach the chain. Default: the one `config.relayingMode` names (`eth_sendRawTransaction` through `client`). */
  submitter?: Submitter;
  /** Runs validation. Default: the one `config.validationMode` and `config.validationTracer` name (safe, in-process). */
  simulator?: Simulator;
  /** EntryPoints served. Default: canonical v0.6, v0.7 and v0.8. */
  entryPoints?: readonly EntryPoint[];
  /** Fee suggestions. Default: from the node, with `config.gasPriceMarkup`. */
  feeOracle?: FeeOracle;
  /** New blocks. Default: polling `client` every `config.blockPollingInterval` ms on `clock`. */
  blocks?: BlockSource;
  clock?: Clock;
  logger?: Logger;
  /**
   * Applied to every line the engine logs (message and fields). Default: URLs cut to scheme, host
   * and port (viem's errors repeat the node URL, whose path or query may hold an API key); give
   * `createRedactor(secrets)` to hide known secrets too.
   */
  redactor?: Redactor;
  config?: Partial<BundlerConfig>;
  preVerificationGas?: PreVerificationGasConfig;
  /**
   * Names this engine in claims. Give a stable one (one per engine sharing the store) so that
   * after a restart the engine reconciles its own in-flight operations with the chain at once;
   * otherwise they are adopted when their claims lapse (`bundleClaimLeaseMs`). Default: a random UUID.
   */
  instanceId?: string;
}

/** The engine's Promise API. Methods take domain values; `@bundlekit/core`'s RPC layer decodes the wire. */
export interface Bundler {
  readonly chainId: number;
  readonly entryPoints: EntryPointRegistry;
  readonly config: Readonly<BundlerConfig>;
  readonly relayers: readonly Address[];
  /** Validate and admit an operation; resolves with its hash once it is durable in the store. */
  sendUserOperation(op: UserOperation, entryPoint: Address): Promise<Hash>;
  /** Estimate gas limits by simulation, optionally on top of a caller's state override. */
  estimateUserOperationGas(op: UserOperation, entryPoint: Address, stateOverride?: StateOverride): Promise<GasEstimate>;
  /** What recently included operations on `entryPoint` offered and paid. */
  getFeeHistory(parameters: { entryPoint: Address } & Omit<GetFeeHistoryParameters, "entryPoint">): Promise<FeeHistory>;
  getUserOperationByHash(userOpHash: Hash): Promise<UserOperationLookup | undefined>;
  getUserOperationReceipt(userOpHash: Hash): Promise<UserOperationReceipt | undefined>;
  getGasPrice(): Promise<GasPrice>;
  /**
   * Bundle whatever is pending now, on every EntryPoint, and wait (up to `receiptTimeoutMs`) for
   * the bundles to be mined; resolves with their transactions (the first hash sent for each).
   */
  sendBundleNow(): Promise<Hash[]>;
  /**
   * The pull path, for a sequencer's block builder: the bundle the policy picks for this block,
   * its operations claimed until `commitBundle`, `releaseBundle` or `proposalLeaseMs`. Undefined
   * when nothing is ready.
   */
  proposeBundle(request: ProposeBundleRequest): Promise<BundleProposal | undefined>;
  /** The block holds the proposal's bundle (as `transactionHash`, unless the engine signed it): followed to the chain; `preconfirmed` in pull mode. */
  commitBundle(id: string, parameters?: { transactionHash?: Hash | undefined }): Promise<void>;
  /** The block does not hold the proposal's bundle: its operations go back to the pool. */
  releaseBundle(id: string): Promise<void>;
  /** Follow operations' status changes; returns the unsubscribe function. */
  onStatusChange(listener: StatusListener): () => void;
  /** Switch between automatic bundling (every `bundleInterval`) and manual (`sendBundleNow` only), at run time. */
  setBundlingMode(mode: BundlerConfig["bundlingMode"]): void;
  /** Change the automatic bundling interval (milliseconds), from the next bundle on. */
  setBundleInterval(ms: number): void;
  /** The operations in the pool on `entryPoint` (pending, being bundled or sent, not yet included), oldest first. */
  dumpMempool(entryPoint: Address): Promise<MempoolEntry[]>;
  /** Drop every operation not yet sent, on every EntryPoint (`dropped` events with reason "cleared"). */
  clearMempool(): Promise<void>;
  /** The ERC-7562 reputation of every tracked entity on `entryPoint`. */
  dumpReputation(entryPoint: Address): Promise<ReputationReport[]>;
  /** Overwrite entities' reputation counters on `entryPoint`. */
  setReputation(entryPoint: Address, entries: readonly ReputationEntry[]): Promise<void>;
  /** Forget all reputation, on every EntryPoint. */
  clearReputation(): Promise<void>;
  /** `address`'s stake on `entryPoint`, read from the EntryPoint, and whether it meets `minStake`/`minUnstakeDelay`. */
  getStakeStatus(address: Address, entryPoint: Address): Promise<StakeStatus>;
  /**
   * Start the engine: the transaction tracker follows new blocks, and every `bundleInterval` the
   * engine drops operations pending longer than `useropsTTL`, decays reputation when an hour has
   * passed, and bundles (when `bundlingMode` is `auto`).
   */
  start(): void;
  /**
   * Stop bundling and wait for bundling runs in progress. Bundles already sent stay `submitted`
   * in the store; the next engine on it reconciles them with the chain. Does not close the store.
   */
  stop(): Promise<void>;
}

/**
 * Create a bundler engine over the given ports. Reads the chain id from the node; everything
 * else is wired from the parameters.
 */
export async function createBundler(parameters: CreateBundlerParameters): Promise<Bundler> {
  const { client, store, signer } = parameters;
  const config: BundlerConfig = resolveBundlerConfig(parameters.config);
  const clock = parameters.clock ?? systemClock;
  const logger = redactingLogger(parameters.logger ?? silentLogger, parameters.redactor);
  const entryPoints = createEntryPointRegistry(parameters.entryPoints);
  const feeOracle =
    parameters.feeOracle ??
    createChainFeeOracle(client, {
      markupPercent: config.gasPriceMarkup,
      // No older than the engine's own view of the chain: the block source polls as often.
      maxAgeMs: config.blockPollingInterval,
      clock,
    });
  const submitter = parameters.submitter ?? createConfiguredSubmitter(client, config);
  config.relayingMode = submitter.name;
  const claimant = parameters.instanceId ?? randomUUID();
  const blocks = parameters.blocks ?? createPollingBlockSource({ client, clock, logger, intervalMs: config.blockPollingInterval });
  const [chainId, head] = await Promise.all([client.getChainId(), blocks.latest()]);
  const maxBundleGas = config.maxBundleGas ?? defaultMaxBundleGas(head.gasLimit, config.bundleGasLimitMarkup);
  const simulator = parameters.simulator ?? createSimulator(client, chainId, config);
  config.validationMode = simulator.mode;
  if (simulator.tracer) config.validationTracer = simulator.tracer as BundlerConfig["validationTracer"];
  if (simulator.mode === "safe") logger.info("validation: safe mode, ERC-7562 rules enforced", { tracer: simulator.tracer });
  else logger.warn("validation: unsafe mode, simulation only: ERC-7562 rules are not enforced", {});
  const status = createStatusHub();
  const policy = parameters.policy ?? createDefaultMempoolPolicy();
  const reputationStore = parameters.reputation ?? createMemoryReputationStore();
  const reputation = createReputation(reputationStore, store, config);
  const lookup: LookupContext = { client, store, entryPoints, receiptLookupRange: config.receiptLookupRange };
  const now = () => clock.now();
  const simulations = createSimulationGate({ maxConcurrent: config.maxConcurrentSimulations, maxQueued: config.maxQueuedSimulations });

  const send = { client, chainId, store, submitter, clock, logger, emit: status.emit, bundleGasLimitMarkup: config.bundleGasLimitMarkup };
  const onIncluded = (entryPoint: Address, op: UserOperation) => reputation.included(entryPoint, op);
  const tracker = createTransactionTracker({ ...send, feeOracle, config, claimant, claimLeaseMs: config.bundleClaimLeaseMs, onIncluded });
  const reconcileContext = {
    ...send,
    entryPoints,
    receiptLookupRange: config.receiptLookupRange,
    claimant,
    claimLeaseMs: config.bundleClaimLeaseMs,
    onIncluded,
    watch: tracker.watch,
    follows: (userOpHash: Hash) => tracker.follows(userOpHash),
  };
  /** Before the first bundle, this engine's own earlier claims (a restart); afterwards, lapsed ones (a dead peer). */
  let reconciled = false;
  async function reconcile() {
    if (!reconciled) {
      for (const userOpHash of await store.releaseClaims(claimant, clock.now())) {
        status.emit({ userOpHash, status: "pending", reason: "claimed for a bundle before a restart and never sent; back in the pool" });
      }
    }
    await reconcileSubmitted(reconcileContext, { previousClaimant: reconciled ? undefined : claimant });
    reconciled = true;
  }
  let stopping = false;
  const proposeContext = {
    client,
    store,
    policy,
    claimant,
    claimLeaseMs: config.bundleClaimLeaseMs,
    now,
    getGasPrice: () => feeOracle.getGasPrice(),
    buildOptions: { skipValidation: config.skipBundleValidation, accessList: config.eip2930 },
    reputation,
    sizeLimits: { maxBundleCalldataSize: config.maxBundleCalldataSize, maxBundleContextSize: config.maxBundleContextSize },
    maxBundleFeePerGas: config.maxBundleFeePerGas,
  };
  const relayers = createRelayerPool({ client, signer, logger, minSignerBalance: config.minSignerBalance, multicall: config.multicall });
  const bundleSender = createBundleSender({
    store,
    entryPoints,
    blocks,
    relayers,
    tracker,
    reputation,
    logger,
    emit: status.emit,
    clock,
    pollInterval: config.blockPollingInterval,
    receiptLookupRange: config.receiptLookupRange,
    maxOperations: config.bundleSize,
    maxBundleGas,
    beneficiary: config.beneficiary,
    stopped: () => stopping,
    send,
    propose: proposeContext,
  });

  const puller = createBundlePuller({
    client,
    chainId,
    store,
    entryPoints,
    tracker,
    bundleSender,
    clock,
    logger,
    emit: status.emit,
    propose: proposeContext,
    bundleGasLimitMarkup: config.bundleGasLimitMarkup,
    maxOperations: config.bundleSize,
    maxBundleGas,
    proposalLeaseMs: config.proposalLeaseMs,
    preconfirmations: () => config.bundlingMode === "pull",
  });
  status.subscribe(({ userOpHash, status: kind }) => {
    if (kind !== "preconfirmed" && kind !== "submitted") puller.settled(userOpHash);
  });

  /** Start a bundling run on every EntryPoint (joining runs already going). */
  function bundleAll(): Promise<Hash[]>[] {
    return entryPoints.all.map((entryPoint: EntryPoint) =>
      bundleSender.run(entryPoint).catch((error) => {
        logger.error("bundle failed", { entryPoint: entryPoint.address, error: String(error) });
        return [];
      }),
    );
  }

  const l1DataCost = parameters.l1DataCost;
  const l1DataGas =
    l1DataCost && (async (entryPoint: EntryPoint, op: UserOperation) => l1DataGasOf(l1DataCost, op, entryPoint, await feeOracle.getGasPrice()));
  const housekeeping = createHousekeeping({ store, client, policy, reputation, reputationStore, entryPoints, config, logger, emit: status.emit });

  const scheduler = createScheduler({
    clock,
    interval: () => config.bundleInterval,
    async task() {
      try {
        await reconcile();
      } catch (error) {
        // No bundle before the first reconciliation: an operation in flight must not be sent twice.
        logger.error("could not reconcile submitted operations with the chain", { error: String(error) });
        if (!reconciled) return;
      }
      await housekeeping(clock.now()).catch((error) => logger.error("housekeeping failed", { error: String(error) }));
      if (config.bundlingMode === "auto") bundleAll();
    },
  });
  let unsubscribeBlocks: (() => void) | undefined;

  /** Follow `sent` to their receipts, driving the tracker from the latest block, for at most `receiptTimeoutMs`. */
  async function waitMined(sent: readonly Hash[]) {
    const deadline = clock.now() + config.receiptTimeoutMs;
    let settled = false;
    const all = Promise.all(sent.map((hash) => tracker.settled(hash))).then(() => {
      settled = true;
    });
    while (!settled && clock.now() < deadline) {
      await tracker.onBlock(await blocks.latest());
      if (!settled) await Promise.race([all, sleep(clock, Math.min(config.blockPollingInterval, 100))]);
    }
  }

  return {
    chainId,
    entryPoints,
    config,
    relayers: signer.addresses,

    sendUserOperation: (op, entryPoint) =>
      simulations.run(() =>
        admitUserOperation(
          {
            client,
            simulator,
            chainId,
            store,
            policy,
            reputation,
            entryPoints,
            feeOracle,
            clock,
            logger,
            emit: status.emit,
            config,
            maxBundleGas,
            preVerificationGas: parameters.preVerificationGas,
            l1DataGas,
          },
          op,
          entryPoint,
        ),
      ),

    async estimateUserOperationGas(op, entryPointAddress, callerOverride) {
      const entryPoint = entryPoints.get(entryPointAddress);
      // An operation too large to admit gets no estimate (LIM-010), counted with a signature of a usual size.
      checkUserOperationSize(op.signature === "0x" ? { ...op, signature: dummySignature } : op, config.maxUserOperationSize);
      refuseMalleableAuthorization(op);
      // Factory data another pooled operation makes redundant gets the AA10 admission would give.
      if (deploysSender(op)) refuseRedundantFactory(await store.listBySender(entryPoint.address, op.sender), op);
      const context = {
        client,
        feeOracle,
        validationGasLimit: config.validationGasLimit,
        executionGasLimit: config.executionGasLimit,
        gasLimitMarkupPercent: config.estimationGasMarkupPercent,
        staticBuffer: config.estimationStaticBuffer,
        pvgMarkupPercent: config.pvgMarkup,
        preVerificationGas: parameters.preVerificationGas,
        l1DataGas: l1DataGas && ((op: UserOperation) => l1DataGas(entryPoint, op)),
      };
      return simulations.run(() =>
        withQueuedNonce({ client, store }, entryPoint, op, (queued) =>
          estimateUserOperationGas({ ...context, stateOverride: mergeStateOverrides(callerOverride, queued) }, entryPoint, op),
        ),
      );
    },

    async getUserOperationByHash(userOpHash) {
      const found = await getUserOperationByHash(lookup, userOpHash);
      const promised = found && found.blockNumber === undefined ? puller.preconfirmation(userOpHash) : undefined;
      return promised ? { ...found!, ...promised } : found;
    },
    getUserOperationReceipt: (userOpHash) => getUserOperationReceipt(lookup, userOpHash),
    getGasPrice: () => feeOracle.getGasPrice(),
    getFeeHistory: ({ entryPoint, ...range }) => getFeeHistory(client, { entryPoint: entryPoints.get(entryPoint), ...range }),

    async sendBundleNow() {
      await reconcile();
      await housekeeping(clock.now());
      const runs = bundleAll();
      // Runs wait for relayers whose bundles are still unmined: drive the tracker while they go.
      let done = false;
      const all = Promise.all(runs).finally(() => {
        done = true;
      });
      while (!done) {
        await tracker.onBlock(await blocks.latest());
        await Promise.race([all, sleep(clock, Math.min(config.blockPollingInterval, 100))]);
      }
      const sent = (await all).flat();
      await waitMined(sent);
      return sent;
    },

    proposeBundle: (request) => puller.propose(request),
    commitBundle: (id, parameters) => puller.commit(id, parameters),
    releaseBundle: (id) => puller.release(id),

    onStatusChange: status.subscribe,

    setBundlingMode(mode) {
      config.bundlingMode = mode;
    },

    setBundleInterval(ms) {
      config.bundleInterval = ms;
      scheduler.reschedule();
    },

    async dumpMempool(entryPointAddress) {
      const { address } = entryPoints.get(entryPointAddress);
      return (await listInPool(store, address)).sort((a, b) => a.receivedAt - b.receivedAt || (a.userOpHash < b.userOpHash ? -1 : 1));
    },

    async clearMempool() {
      for (const userOpHash of await store.clear({ now: clock.now() })) {
        status.emit({ userOpHash, status: "dropped", reason: "cleared" });
      }
    },

    dumpReputation: (entryPoint) => reputation.dump(entryPoints.get(entryPoint).address),
    setReputation: (entryPoint, entries) => reputationStore.set(entryPoints.get(entryPoint).address, entries),
    clearReputation: () => reputationStore.clear(),
    getStakeStatus: (address, entryPoint) => getStakeStatus(client, entryPoints.get(entryPoint), address, config),

    start() {
      stopping = false;
      unsubscribeBlocks ??= blocks.subscribe((block) => {
        tracker.onBlock(block).catch((error) => logger.error("could not follow bundles", { error: String(error) }));
      });
      scheduler.start();
    },

    async stop() {
      stopping = true;
      relayers.wakeAll();
      unsubscribeBlocks?.();
      unsubscribeBlocks = undefined;
      await scheduler.stop();
      await bundleSender.inProgress();
      await simulator.close();
    },
  };
}
