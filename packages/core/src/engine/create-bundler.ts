import { randomUUID } from "node:crypto";
import type { Address, Hash } from "viem";
import { defaultMaxBundleGas } from "../bundle/bundle-gas.ts";
import { createPollingBlockSource } from "../chain/polling-block-source.ts";
import { createEntryPointRegistry, type EntryPoint, type EntryPointRegistry } from "../entrypoint/registry.ts";
import type { GasEstimate } from "../gas/estimate-user-operation-gas.ts";
import { createChainFeeOracle, type FeeOracle, type GasPrice } from "../gas/fee-oracle.ts";
import { type FeeHistory, getFeeHistory, type GetFeeHistoryParameters } from "../gas/get-fee-history.ts";
import { type L1DataCost, l1DataGas as l1DataGasOf } from "../gas/l1-data-cost.ts";
import { createDefaultMempoolPolicy } from "../mempool/default-mempool-policy.ts";
import { listInPool } from "../mempool/list-in-pool.ts";
import type { BlockSource } from "../ports/block-source.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { type Clock, systemClock } from "../ports/clock.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import { type Logger, silentLogger } from "../ports/logger.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { PreconfirmationStore } from "../ports/preconfirmation-store.ts";
import { createMemoryPreconfirmationStore } from "../preconfirmation/memory-preconfirmation-store.ts";
import type { PreconfirmationSigner } from "../preconfirmation/sign-preconfirmation.ts";
import type { RelayerSigner } from "../ports/relayer-signer.ts";
import type { ReputationEntry, ReputationStore } from "../ports/reputation-store.ts";
import type { Simulator } from "../ports/simulator.ts";
import type { Submitter } from "../ports/submitter.ts";
import { getUserOperationByHash, getUserOperationReceipt, type UserOperationLookup, type UserOperationReceipt } from "../receipt/lookup.ts";
import { redactingLogger } from "../redaction/redacting-logger.ts";
import type { Redactor } from "../redaction/redactor.ts";
import { createMemoryReputationStore } from "../reputation/memory-reputation-store.ts";
import { createReputation, type ReputationReport } from "../reputation/reputation.ts";
import { getStakeStatus, type StakeStatus } from "../reputation/stake.ts";
import { createStatusHub, type StatusListener } from "../status/status-change.ts";
import { createConfiguredSubmitter } from "../submit/configured-submitter.ts";
import { createTransactionTracker } from "../submit/transaction-tracker.ts";
import type { PreVerificationGasConfig } from "../userop/pre-verification-gas.ts";
import type { UserOperation } from "../userop/types.ts";
import { getAddress } from "../utils/get-address.ts";
import { createSimulator } from "../validation/create-simulator.ts";
import { type AbortOptions, withSignal } from "./abortable.ts";
import { admitUserOperation } from "./admission.ts";
import { type BundleProposal, createBundlePuller, type ProposeBundleRequest } from "./bundle-puller.ts";
import { createBundleSender } from "./bundle-sender.ts";
import { type BundlingState, createBundlingLoop } from "./bundling-loop.ts";
import { estimateForCaller } from "./estimation.ts";
import { BundlerConfigError } from "../errors/bundler-config-error.ts";
import { InvalidParamsError } from "../errors/errors.ts";
import { createHousekeeping } from "./housekeeping.ts";
import { createRelayerPool } from "./relayer-pool.ts";
import { type BundlerSettings, type BundlerSettingsInput, type BundlingMode, resolveBundlerSettings } from "./settings.ts";
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
  /**
   * Preconfirmations made in pull mode. Default: in memory (lost on restart). Give the storage
   * package's (on the mempool's database) to keep them across restarts and share them between engines.
   */
  preconfirmations?: PreconfirmationStore;
  /**
   * Signs preconfirmations (EIP-712, `preconfirmationTypedData`): a viem `LocalAccount` such as
   * `privateKeyToAccount(key)`. Default: none, and preconfirmations are unsigned.
   */
  preconfirmationSigner?: PreconfirmationSigner | undefined;
  /**
   * Relayer accounts that send bundles. Optional in pull mode (`bundling.mode: "pull"`), where
   * the block builder signs the bundles it pulls; required in `auto` and `manual` mode.
   */
  signer?: RelayerSigner | undefined;
  /** How bundles reach the chain. Default: the one `settings.relaying.mode` names (`eth_sendRawTransaction` through `client`). */
  submitter?: Submitter;
  /** Runs validation. Default: the one `settings.validation.mode` and `.tracer` name (safe, in-process). */
  simulator?: Simulator;
  /** EntryPoints served. Default: canonical v0.6, v0.7 and v0.8. */
  entryPoints?: readonly EntryPoint[];
  /** Fee suggestions. Default: from the node, with `settings.gas.gasPriceMarkupPercent`. */
  feeOracle?: FeeOracle;
  /** New blocks. Default: polling `client` every `settings.tracking.blockPollingIntervalMs` on `clock`. */
  blocks?: BlockSource;
  clock?: Clock;
  logger?: Logger;
  /**
   * Applied to every line the engine logs (message and fields). Default: URLs cut to scheme, host
   * and port (viem's errors repeat the node URL, whose path or query may hold an API key); give
   * `createRedactor(secrets)` to hide known secrets too.
   */
  redactor?: Redactor;
  /** How the engine runs, per component; every field has a default (docs/configuration.md). Checked here: a bad value throws `BundlerConfigError` naming it. */
  settings?: BundlerSettingsInput;
  preVerificationGas?: PreVerificationGasConfig;
  /**
   * Names this engine in claims. Give a stable one (one per engine sharing the store) so that
   * after a restart the engine reconciles its own in-flight operations with the chain at once;
   * otherwise they are adopted when their claims lapse (`bundling.claimLeaseMs`). Default: a random UUID.
   */
  instanceId?: string;
}

/** The engine's Promise API. Methods take domain values; `@bundlekit/core`'s RPC layer decodes the wire. */
export interface Bundler {
  readonly chainId: number;
  readonly entryPoints: EntryPointRegistry;
  /** The settings it runs with, frozen; the relaying and validation names are those of the components in use. */
  readonly settings: BundlerSettings;
  /** Run-time state: how bundling starts and how often (`setBundlingMode`, `setBundleInterval`). */
  readonly bundling: Readonly<BundlingState>;
  readonly relayers: readonly Address[];
  /** The address that signs preconfirmations (`preconfirmationSigner`); undefined when they are unsigned. */
  readonly preconfirmationSigner?: Address | undefined;
  /**
   * Validate and admit an operation; resolves with its hash once it is durable in the store.
   * `signal` abandons it: out of the simulation queue, or at its next node request.
   */
  sendUserOperation(op: UserOperation, entryPoint: Address, options?: AbortOptions): Promise<Hash>;
  /**
   * Estimate gas limits by simulation, optionally on top of a caller's state override. `signal`
   * abandons it: out of the simulation queue, or at its next node request.
   */
  estimateUserOperationGas(op: UserOperation, entryPoint: Address, stateOverride?: StateOverride, options?: AbortOptions): Promise<GasEstimate>;
  /** What recently included operations on `entryPoint` offered and paid. */
  getFeeHistory(parameters: { entryPoint: Address } & Omit<GetFeeHistoryParameters, "entryPoint">): Promise<FeeHistory>;
  getUserOperationByHash(userOpHash: Hash): Promise<UserOperationLookup | undefined>;
  getUserOperationReceipt(userOpHash: Hash): Promise<UserOperationReceipt | undefined>;
  getGasPrice(): Promise<GasPrice>;
  /**
   * Bundle whatever is pending now, on every EntryPoint, and wait (up to `bundling.receiptTimeoutMs`) for
   * the bundles to be mined; resolves with their transactions (the first hash sent for each).
   */
  sendBundleNow(): Promise<Hash[]>;
  /**
   * The pull path, for a sequencer's block builder: the bundle the policy picks for this block,
   * its operations claimed until `commitBundle`, `releaseBundle` or `bundling.proposalLeaseMs`. Undefined
   * when nothing is ready. `signal` abandons it before the next EntryPoint's proposal (never
   * halfway through one, which would leave operations claimed).
   */
  proposeBundle(request: ProposeBundleRequest, options?: AbortOptions): Promise<BundleProposal | undefined>;
  /** The block holds the proposal's bundle (as `transactionHash`, unless the engine signed it): followed to the chain; `preconfirmed` in pull mode. */
  commitBundle(id: string, parameters?: { transactionHash?: Hash | undefined }): Promise<void>;
  /** The block does not hold the proposal's bundle: its operations go back to the pool. */
  releaseBundle(id: string): Promise<void>;
  /** Follow operations' status changes; returns the unsubscribe function. */
  onStatusChange(listener: StatusListener): () => void;
  /**
   * Switch between automatic bundling (every `bundling.intervalMs`) and manual (`sendBundleNow` only), at run time.
   * An engine without relayers stays in pull mode: any other mode throws `InvalidParamsError`.
   */
  setBundlingMode(mode: BundlingMode): void;
  /** Change the automatic bundling interval (milliseconds), from the next bundle on. */
  setBundleInterval(ms: number): void;
  /** The operations in the pool on `entryPoint` (pending, being bundled or sent, not yet included), oldest first. */
  dumpMempool(entryPoint: Address): Promise<MempoolEntry[]>;
  /** Drop every operation not yet sent, on every EntryPoint (`dropped` events with reason "cleared"). */
  clearMempool(): Promise<void>;
  /** The ERC-7562 reputation of every tracked entity on `entryPoint`. */
  dumpReputation(entryPoint: Address): Promise<ReputationReport[]>;
  /** Overwrite entities' reputation counters on `entryPoint` (addresses in any letter case). */
  setReputation(entryPoint: Address, entries: readonly ReputationEntry[]): Promise<void>;
  /** Forget all reputation, on every EntryPoint. */
  clearReputation(): Promise<void>;
  /** `address`'s stake on `entryPoint`, read from the EntryPoint, and whether it meets `reputation.minStake` and `.minUnstakeDelaySeconds`. */
  getStakeStatus(address: Address, entryPoint: Address): Promise<StakeStatus>;
  /**
   * Start the engine: the transaction tracker follows new blocks, and every `bundling.intervalMs` the
   * engine drops operations pending longer than `mempool.ttlSeconds`, decays reputation when an hour has
   * passed, and bundles (when the bundling mode is `auto`).
   */
  start(): void;
  /**
   * Stop bundling and wait for bundling runs in progress. Bundles already sent stay `submitted`
   * in the store; the next engine on it reconciles them with the chain. Does not close the store.
   */
  stop(): Promise<void>;
}

/**
 * Create a bundler engine over the given ports: the settings checked, then each component built
 * with its own settings and the ports it uses. Reads the chain id and the head from the node.
 */
export async function createBundler(parameters: CreateBundlerParameters): Promise<Bundler> {
  const { client, store } = parameters;
  const requested = resolveBundlerSettings(parameters.settings);
  const { mempool, validation, gas, bundling, relaying, tracking } = requested;
  const signer = parameters.signer ?? noRelayers;
  if (signer.addresses.length === 0 && bundling.mode !== "pull") {
    throw new BundlerConfigError("signer", `is required in ${bundling.mode} bundling mode, which sends bundles with the engine's relayers: give a RelayerSigner, or use bundling.mode "pull" where the block builder signs`);
  }
  const clock = parameters.clock ?? systemClock;
  const logger = redactingLogger(parameters.logger ?? silentLogger, parameters.redactor);
  const entryPoints = createEntryPointRegistry(parameters.entryPoints);
  const feeOracle = parameters.feeOracle ?? createChainFeeOracle(client, { markupPercent: gas.gasPriceMarkupPercent, maxAgeMs: tracking.blockPollingIntervalMs, clock });
  const submitter = parameters.submitter ?? createConfiguredSubmitter(client, relaying);
  const blocks = parameters.blocks ?? createPollingBlockSource({ client, clock, logger, intervalMs: tracking.blockPollingIntervalMs });
  const [chainId, head] = await Promise.all([client.getChainId(), blocks.latest()]);
  const simulator = parameters.simulator ?? createSimulator(client, chainId, validation);
  const settings = inUse(requested, submitter, simulator, logger);
  const maxBundleGas = bundling.maxGas ?? defaultMaxBundleGas(head.gasLimit, bundling.gasLimitMarkupPercent);
  const state: BundlingState = { mode: bundling.mode, intervalMs: bundling.intervalMs };
  const status = createStatusHub();
  const emit = status.emit;
  const policy = parameters.policy ?? createDefaultMempoolPolicy({ sameSenderMempoolCount: mempool.sameSenderCount });
  const reputationStore = parameters.reputation ?? createMemoryReputationStore();
  const reputation = createReputation(reputationStore, store, settings.reputation);
  const simulations = createSimulationGate({ maxConcurrent: validation.maxConcurrentSimulations, maxQueued: validation.maxQueuedSimulations, maxWaitMs: validation.maxSimulationWaitMs, clock });
  const claimant = parameters.instanceId ?? randomUUID();
  const receiptLookupRange = BigInt(tracking.receiptLookupBlocks);
  const l1DataCost = parameters.l1DataCost;
  const l1DataGas = l1DataCost && (async (entryPoint: EntryPoint, op: UserOperation) => l1DataGasOf(l1DataCost, op, entryPoint, await feeOracle.getGasPrice()));
  const ports = { client, chainId, store, entryPoints, clock, logger, emit };

  const send = { ...ports, submitter, gasLimitMarkupPercent: bundling.gasLimitMarkupPercent };
  const onIncluded = (entryPoint: Address, op: UserOperation, facts?: { factoryIgnored?: boolean }) => reputation.included(entryPoint, op, facts);
  const preconfirmations = parameters.preconfirmations ?? createMemoryPreconfirmationStore();
  const tracker = createTransactionTracker({ ...send, feeOracle, settings: tracking, maxFeePerGas: bundling.maxFeePerGas, claimant, claimLeaseMs: bundling.claimLeaseMs, onIncluded, preconfirmations });
  const propose = {
    ...ports,
    simulator,
    policy,
    reputation,
    claimant,
    claimLeaseMs: bundling.claimLeaseMs,
    now: () => clock.now(),
    getGasPrice: () => feeOracle.getGasPrice(),
    settings: bundling,
  };
  const relayers = createRelayerPool({ client, signer, logger, minSignerBalance: relaying.minSignerBalance, multicall: relaying.multicall });
  const bundleSender = createBundleSender({
    ...ports,
    blocks,
    relayers,
    tracker,
    reputation,
    propose,
    send,
    receiptLookupRange,
    pollIntervalMs: tracking.blockPollingIntervalMs,
    maxBundleGas,
    settings: bundling,
    stopped: () => loop.stopped(),
  });
  const puller = createBundlePuller({
    ...ports,
    tracker,
    bundleSender,
    propose,
    maxBundleGas,
    settings: bundling,
    preconfirming: () => state.mode === "pull",
    preconfirmations,
    preconfirmationSigner: parameters.preconfirmationSigner,
    releaseEarlierClaims: () => loop.releaseEarlierClaims(),
  });
  const housekeeping = createHousekeeping({ ...ports, policy, reputation, reputationStore, settings: mempool });
  const reconcile = { ...ports, receiptLookupRange, claimant, claimLeaseMs: bundling.claimLeaseMs, onIncluded, watch: tracker.watch, follows: tracker.follows, preconfirmations };
  const loop = createBundlingLoop({ ...ports, blocks, tracker, bundleSender, state, reconcile, housekeeping, pollIntervalMs: tracking.blockPollingIntervalMs, receiptTimeoutMs: bundling.receiptTimeoutMs });
  const admission = { ...ports, simulator, policy, reputation, feeOracle, settings, maxBundleGas, preVerificationGas: parameters.preVerificationGas, l1DataGas };
  const estimation = { ...ports, feeOracle, settings: gas, maxUserOperationBytes: validation.maxUserOperationBytes, preVerificationGas: parameters.preVerificationGas, l1DataGas };
  const lookup = { client, store, entryPoints, receiptLookupRange, minedReceipt: tracker.minedReceipt };

  return {
    chainId,
    entryPoints,
    settings,
    bundling: state,
    relayers: signer.addresses,
    preconfirmationSigner: parameters.preconfirmationSigner?.address,
    sendUserOperation: (op, entryPoint, options) => simulations.run(() => admitUserOperation(withSignal(admission, options?.signal), op, entryPoint), options?.signal),
    estimateUserOperationGas: (op, entryPoint, stateOverride, options) =>
      simulations.run(() => estimateForCaller(withSignal(estimation, options?.signal), op, entryPoint, stateOverride), options?.signal),
    async getUserOperationByHash(userOpHash) {
      const [found, preconfirmation] = await Promise.all([getUserOperationByHash(lookup, userOpHash), preconfirmations.get(userOpHash)]);
      if (!found || !preconfirmation) return found;
      // Until the operation is seen on chain, a standing promise names the committed transaction and the block.
      const promised = found.blockNumber === undefined && preconfirmation.status === "promised";
      return { ...found, ...(promised ? { transactionHash: preconfirmation.transactionHash, blockNumber: preconfirmation.blockNumber } : {}), preconfirmation };
    },
    getUserOperationReceipt: (userOpHash) => getUserOperationReceipt(lookup, userOpHash),
    getGasPrice: () => feeOracle.getGasPrice(),
    getFeeHistory: ({ entryPoint, ...range }) => getFeeHistory(client, { entryPoint: entryPoints.get(entryPoint), ...range }),
    sendBundleNow: () => loop.sendBundleNow(),
    proposeBundle: (request, options) => puller.propose(request, options?.signal),
    commitBundle: (id, parameters) => puller.commit(id, parameters),
    releaseBundle: (id) => puller.release(id),
    onStatusChange: status.subscribe,
    setBundlingMode(mode) {
      if (mode !== "pull" && signer.addresses.length === 0) {
        throw new InvalidParamsError("mode", `the engine holds no relayer signer: it cannot send bundles in ${mode} mode, only pull mode`);
      }
      state.mode = mode;
    },
    setBundleInterval(ms) {
      state.intervalMs = ms;
      loop.reschedule();
    },
    dumpMempool: async (entryPoint) => (await listInPool(store, entryPoints.get(entryPoint).address)).sort(oldestFirst),
    async clearMempool() {
      for (const userOpHash of await store.clear({ now: clock.now() })) emit({ userOpHash, status: "dropped", reason: "cleared" });
    },
    dumpReputation: (entryPoint) => reputation.dump(entryPoints.get(entryPoint).address),
    setReputation: (entryPoint, entries) =>
      reputationStore.set(entryPoints.get(entryPoint).address, entries.map((entry) => ({ ...entry, address: getAddress(entry.address) }))),
    clearReputation: () => reputationStore.clear(),
    getStakeStatus: (address, entryPoint) => getStakeStatus(client, entryPoints.get(entryPoint), address, settings.reputation),
    start: () => loop.start(),
    async stop() {
      relayers.wakeAll();
      puller.closeAll();
      await loop.stop();
      await simulator.close();
    },
  };
}

/** No relayer: a pull-mode engine whose block builder signs. */
const noRelayers: RelayerSigner = { addresses: [], lease: () => undefined };

const oldestFirst = (a: MempoolEntry, b: MempoolEntry) => a.receivedAt - b.receivedAt || (a.userOpHash < b.userOpHash ? -1 : 1);

/** The settings as run: relaying and validation named by the components in use (a custom submitter or simulator names its own). */
function inUse(requested: BundlerSettings, submitter: Submitter, simulator: Simulator, logger: Logger): BundlerSettings {
  if (simulator.mode === "safe") logger.info("validation: safe mode, ERC-7562 rules enforced", { tracer: simulator.tracer });
  else logger.warn("validation: unsafe mode, simulation only: ERC-7562 rules are not enforced", {});
  return Object.freeze({
    ...requested,
    relaying: Object.freeze({ ...requested.relaying, mode: submitter.name }),
    validation: Object.freeze({ ...requested.validation, mode: simulator.mode, tracer: simulator.tracer ?? requested.validation.tracer }),
  });
}
