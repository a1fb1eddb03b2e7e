import { randomUUID } from "node:crypto";
import type { Address, Hash } from "viem";
import { buildBundle } from "../bundle/build-bundle.ts";
import { createEntryPointRegistry, type EntryPoint, type EntryPointRegistry } from "../entrypoint/registry.ts";
import {
  DuplicateUserOperationError,
  EntryPointRejectionError,
  InvalidParamsError,
  MempoolRejectionError,
} from "../errors/errors.ts";
import { estimateUserOperationGas, type GasEstimate } from "../gas/estimate-user-operation-gas.ts";
import { enforceGasPrice } from "../gas/enforce-gas-price.ts";
import { createChainFeeOracle, type FeeOracle, type GasPrice } from "../gas/fee-oracle.ts";
import { type FeeHistory, getFeeHistory, type GetFeeHistoryParameters } from "../gas/get-fee-history.ts";
import type { PreVerificationGasConfig } from "../gas/pre-verification-gas.ts";
import { createDefaultMempoolPolicy } from "../mempool/default-mempool-policy.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { type Clock, systemClock } from "../ports/clock.ts";
import { type Logger, silentLogger } from "../ports/logger.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { RelayerLease, RelayerSigner } from "../ports/relayer-signer.ts";
import type { ReputationEntry, ReputationStore } from "../ports/reputation-store.ts";
import type { Submitter } from "../ports/submitter.ts";
import {
  getUserOperationByHash,
  getUserOperationReceipt,
  type LookupContext,
  type UserOperationLookup,
  type UserOperationReceipt,
} from "../receipt/lookup.ts";
import { createReputation, type ReputationReport } from "../reputation/reputation.ts";
import { getStakeStatus, isStaked, type StakeStatus } from "../reputation/stake.ts";
import { createConfiguredSubmitter } from "../submit/configured-submitter.ts";
import { leaseFundedRelayer } from "../submit/lease-funded-relayer.ts";
import { sendBundle } from "../submit/send-bundle.ts";
import { createMemoryReputationStore } from "../testing/memory-reputation-store.ts";
import { getUserOperationHash } from "../userop/hash.ts";
import { factoryOf, splitNonce, type UserOperation } from "../userop/types.ts";
import { deploymentOverride } from "../validation/deployment-override.ts";
import { mergeStateOverrides, type StateOverride } from "../validation/state-override.ts";
import { nonceOverride } from "../validation/nonce-override.ts";
import { precheckUserOperation } from "../validation/prechecks.ts";
import { validateUserOperation } from "../validation/validate-user-operation.ts";
import { type BundlerConfig, resolveBundlerConfig } from "./config.ts";
import { createStatusHub, type StatusChange, type StatusListener } from "./status.ts";

/** Candidates claimed per bundle slot, so the policy chooses among more than the oldest operations. */
const candidatesPerBundleSlot = 4;

/** The candidates a policy chose, in its order, at most `limit`: only real candidates, each once. */
function pick(candidates: readonly MempoolEntry[], chosen: readonly MempoolEntry[], limit: number): MempoolEntry[] {
  const byHash = new Map(candidates.map((c) => [c.userOpHash, c]));
  const picked = new Set<MempoolEntry>();
  for (const { userOpHash } of chosen) {
    const candidate = byHash.get(userOpHash);
    if (candidate && picked.size < limit) picked.add(candidate);
  }
  return [...picked];
}

export interface CreateBundlerParameters {
  /** Read access to the chain. */
  client: ChainClient;
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
  /** EntryPoints served. Default: canonical v0.6, v0.7 and v0.8. */
  entryPoints?: readonly EntryPoint[];
  /** Fee suggestions. Default: from the node, with `config.gasPriceMarkup`. */
  feeOracle?: FeeOracle;
  clock?: Clock;
  logger?: Logger;
  config?: Partial<BundlerConfig>;
  preVerificationGas?: PreVerificationGasConfig;
  /** Names this engine in bundle claims when several share a store. Default: a random UUID. */
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
  /** Bundle whatever is pending now, on every EntryPoint; resolves with the sent transactions. */
  sendBundleNow(): Promise<Hash[]>;
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
   * Start the engine's timer: every `bundleInterval` it drops operations pending longer than
   * `useropsTTL`, decays reputation when an hour has passed, and bundles (when `bundlingMode` is `auto`).
   */
  start(): void;
  /** Stop bundling and wait for bundles in flight. Does not close the store. */
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
  const logger = parameters.logger ?? silentLogger;
  const entryPoints = createEntryPointRegistry(parameters.entryPoints);
  const feeOracle = parameters.feeOracle ?? createChainFeeOracle(client, { markupPercent: config.gasPriceMarkup });
  const submitter = parameters.submitter ?? createConfiguredSubmitter(client, config);
  config.relayingMode = submitter.name;
  const instanceId = parameters.instanceId ?? randomUUID();
  const chainId = await client.getChainId();
  const status = createStatusHub();
  const policy = parameters.policy ?? createDefaultMempoolPolicy();
  const reputationStore = parameters.reputation ?? createMemoryReputationStore();
  const reputation = createReputation(reputationStore, store, config);
  const lookup: LookupContext = { client, store, entryPoints, receiptLookupRange: config.receiptLookupRange };

  const sendContext = {
    client,
    chainId,
    store,
    submitter,
    feeOracle,
    clock,
    logger,
    emit: status.emit,
    bundleGasLimitMarkup: config.bundleGasLimitMarkup,
    receiptTimeoutMs: config.receiptTimeoutMs,
  };
  const inFlight = new Set<Promise<Hash | undefined>>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  /** Set by `stop()`: bundle jobs still waiting for a relayer give up instead of starting. */
  let stopping = false;

  let relayersHeld = 0;
  const relayerWaiters = new Set<() => void>();
  /** EntryPoints with a bundle job waiting for a relayer; one such job per EntryPoint is enough. */
  const waitingForRelayer = new Set<EntryPoint>();

  function releaseRelayer(relayer: RelayerLease) {
    relayer.release();
    relayersHeld--;
    for (const wake of relayerWaiters) wake();
    relayerWaiters.clear();
  }

  /**
   * Claim operations, then lease a funded relayer for them (claim first: an EntryPoint with
   * nothing pending costs no balance read). When every relayer is busy with other bundles, the
   * claim goes back to the pool while this job waits for one to be released, so fewer relayers
   * than EntryPoints only slows bundling down and no claim lapses while waiting.
   */
  async function runBundle(entryPoint: EntryPoint): Promise<Hash | undefined> {
    for (;;) {
      const candidates = await store.claimForBundle({
        entryPoint: entryPoint.address,
        limit: config.bundleSize * candidatesPerBundleSlot,
        claimant: instanceId,
        leaseMs: config.bundleClaimLeaseMs,
        now: clock.now(),
      });
      if (candidates.length === 0) return undefined;
      // The policy picks and orders the bundle; the other candidates go straight back to the pool.
      const claimed = pick(candidates, policy.select(candidates, config.bundleSize), config.bundleSize);
      const unselected = candidates.filter((c) => !claimed.includes(c)).map((c) => c.userOpHash);
      if (unselected.length > 0) await store.requeue(unselected, clock.now());
      if (claimed.length === 0) return undefined;
      const relayer = await leaseFundedRelayer({ client, signer, logger, minSignerBalance: config.minSignerBalance, multicall: config.multicall }).catch(
        async (error) => {
          await store.requeue(claimed.map((e) => e.userOpHash), clock.now());
          throw error;
        },
      );
      if (relayer) {
        relayersHeld++;
        return sendClaimed(entryPoint, claimed, relayer);
      }
      await store.requeue(claimed.map((e) => e.userOpHash), clock.now());
      if (relayersHeld === 0) {
        logger.warn("no funded relayer is available; operations wait in the pool", { entryPoint: entryPoint.address });
        return undefined;
      }
      waitingForRelayer.add(entryPoint);
      await new Promise<void>((resolve) => relayerWaiters.add(resolve)).finally(() => waitingForRelayer.delete(entryPoint));
      if (stopping) return undefined;
    }
  }

  /** Build, send and follow one bundle of `claimed` with `relayer`, which it releases at the end. */
  async function sendClaimed(entryPoint: EntryPoint, claimed: MempoolEntry[], relayer: RelayerLease): Promise<Hash | undefined> {
    try {
      const beneficiary = config.beneficiary ?? relayer.address;
      const { bundle, rejected } = await buildBundle(client, entryPoint, claimed, relayer.address, beneficiary, {
        skipValidation: config.skipBundleValidation,
        accessList: config.eip2930,
      });
      for (const { entry, reason } of rejected) {
        await store.drop([entry.userOpHash], reason, clock.now());
        await reputation.rejected(entryPoint.address, entry.userOperation, reason);
        status.emit({ userOpHash: entry.userOpHash, status: "dropped", reason });
        logger.warn("operation dropped from bundle", { userOpHash: entry.userOpHash, reason });
      }
      if (!bundle) return undefined;
      const included: UserOperation[] = [];
      const emit = (change: StatusChange) => {
        status.emit(change);
        const entry = change.status === "included" && bundle.entries.find((e) => e.userOpHash === change.userOpHash);
        if (entry) included.push(entry.userOperation);
      };
      const transactionHash = await sendBundle({ ...sendContext, emit }, relayer, bundle);
      for (const op of included) await reputation.included(entryPoint.address, op);
      return transactionHash;
    } catch (error) {
      // Not sent: give the claimed operations back so the next attempt retries them.
      const current = await Promise.all(claimed.map((e) => store.get(e.userOpHash)));
      const unsent = current.filter((e) => e?.status === "bundling").map((e) => e!.userOpHash);
      await store.requeue(unsent, clock.now());
      throw error;
    } finally {
      releaseRelayer(relayer);
    }
  }

  /** Start a bundle job per EntryPoint, except where one already waits for a relayer. */
  function bundleOnce(): Promise<Hash | undefined>[] {
    const started: Promise<Hash | undefined>[] = [];
    for (const entryPoint of entryPoints.all) {
      if (waitingForRelayer.has(entryPoint)) continue;
      const job = runBundle(entryPoint).catch((error) => {
        logger.error("bundle failed", { entryPoint: entryPoint.address, error: String(error) });
        return undefined;
      });
      inFlight.add(job);
      job.finally(() => inFlight.delete(job));
      started.push(job);
    }
    return started;
  }

  /**
   * Run a simulation; when it fails because the operation is queued behind the sender's previous
   * nonce still in the pool, run it again as if that one had landed: with the nonce advanced
   * (AA25), and for a new account also deployed by its pooled first operation (AA20). A sender
   * may queue consecutive operations without waiting for each to be bundled.
   */
  async function withQueuedNonce<T>(entryPoint: EntryPoint, op: UserOperation, run: (override?: StateOverride) => Promise<T>) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof EntryPointRejectionError && /^AA2[05]/.test(error.reason))) throw error;
      const pooled = splitNonce(op.nonce).sequence > 0n ? await store.listBySender(entryPoint.address, op.sender) : [];
      if (!pooled.some((e) => e.userOperation.nonce === op.nonce - 1n)) throw error;
      const queued = nonceOverride(entryPoint.address, op.sender, op.nonce);
      if (error.reason.startsWith("AA25")) return run(queued);
      const deploying = pooled.find((e) => factoryOf(e.userOperation));
      const deployed = deploying && (await deploymentOverride(client, entryPoint, deploying.userOperation));
      if (!deployed) throw error;
      return run(mergeStateOverrides(deployed, queued));
    }
  }

  function validate(entryPoint: EntryPoint, op: UserOperation) {
    const context = { client, nowSeconds: BigInt(Math.floor(clock.now() / 1000)), preVerificationGas: parameters.preVerificationGas };
    return withQueuedNonce(entryPoint, op, (stateOverride) => validateUserOperation({ ...context, stateOverride }, entryPoint, op));
  }

  let nextDecayAt = 0;

  /** Drop operations pending longer than `useropsTTL` (0 keeps them), and decay reputation when due. */
  async function housekeeping() {
    const now = clock.now();
    if (config.useropsTTL > 0) {
      for (const userOpHash of await store.expire(now - config.useropsTTL * 1000, now)) {
        status.emit({ userOpHash, status: "dropped", reason: "expired" });
        logger.info("operation expired", { userOpHash });
      }
    }
    if (now >= nextDecayAt) {
      nextDecayAt = now + 60_000; // the store decays once per hour; asking each minute is plenty
      await reputationStore.decay(now);
    }
  }

  function schedule() {
    if (!running) return;
    timer = setTimeout(async () => {
      await housekeeping().catch((error) => logger.error("housekeeping failed", { error: String(error) }));
      if (config.bundlingMode === "auto") bundleOnce();
      schedule();
    }, config.bundleInterval);
  }

  return {
    chainId,
    entryPoints,
    config,
    relayers: signer.addresses,

    async sendUserOperation(op, entryPointAddress) {
      const entryPoint = entryPoints.get(entryPointAddress);
      precheckUserOperation(op, config);
      const userOpHash = getUserOperationHash(op, entryPoint, chainId);
      if (await store.get(userOpHash)) throw new DuplicateUserOperationError(userOpHash);
      await reputation.check(entryPoint.address, op);
      const [gasPrice, validation, senderOperations] = await Promise.all([
        feeOracle.getGasPrice(),
        validate(entryPoint, op),
        store.listBySender(entryPoint.address, op.sender),
      ]);
      if (config.enforceGasPrice) enforceGasPrice(op, gasPrice, config.enforceGasPriceThreshold);
      if (op.maxFeePerGas < gasPrice.baseFeePerGas) {
        throw new InvalidParamsError("maxFeePerGas", `${op.maxFeePerGas} is below the current base fee ${gasPrice.baseFeePerGas}`);
      }
      const entry = {
        userOpHash,
        entryPoint: entryPoint.address,
        entryPointVersion: entryPoint.version,
        userOperation: op,
        receivedAt: clock.now(),
      };
      const senderStaked = isStaked(validation.sender, config);
      const { replaces } = policy.admit({ entry, senderOperations, senderStaked });
      if (replaces) {
        if (!(await store.replace(replaces.userOpHash, entry))) {
          throw new MempoolRejectionError("the operation it would replace is already being bundled", { replacing: replaces.userOpHash });
        }
        status.emit({ userOpHash: replaces.userOpHash, status: "dropped", reason: `replaced by ${userOpHash}` });
      } else {
        await store.add(entry);
      }
      await reputation.admitted(entryPoint.address, op, { senderStaked, replaced: replaces?.userOperation });
      status.emit({ userOpHash, status: "pending" });
      logger.debug("operation accepted", { userOpHash, sender: op.sender, entryPoint: entryPoint.address });
      return userOpHash;
    },

    estimateUserOperationGas(op, entryPointAddress, callerOverride) {
      const entryPoint = entryPoints.get(entryPointAddress);
      const context = {
        client,
        feeOracle,
        validationGasLimit: config.validationGasLimit,
        executionGasLimit: config.executionGasLimit,
        gasLimitMarkupPercent: config.estimationGasMarkupPercent,
        staticBuffer: config.estimationStaticBuffer,
        pvgMarkupPercent: config.pvgMarkup,
        preVerificationGas: parameters.preVerificationGas,
      };
      return withQueuedNonce(entryPoint, op, (queued) =>
        estimateUserOperationGas({ ...context, stateOverride: mergeStateOverrides(callerOverride, queued) }, entryPoint, op),
      );
    },

    getUserOperationByHash: (userOpHash) => getUserOperationByHash(lookup, userOpHash),
    getUserOperationReceipt: (userOpHash) => getUserOperationReceipt(lookup, userOpHash),
    getGasPrice: () => feeOracle.getGasPrice(),
    getFeeHistory: ({ entryPoint, ...range }) => getFeeHistory(client, { entryPoint: entryPoints.get(entryPoint), ...range }),

    async sendBundleNow() {
      await housekeeping();
      const sent = await Promise.all(bundleOnce());
      return sent.filter((hash): hash is Hash => hash !== undefined);
    },

    onStatusChange: status.subscribe,

    setBundlingMode(mode) {
      config.bundlingMode = mode;
    },

    setBundleInterval(ms) {
      config.bundleInterval = ms;
      if (!running) return;
      clearTimeout(timer);
      schedule();
    },

    async dumpMempool(entryPointAddress) {
      const { address } = entryPoints.get(entryPointAddress);
      const lists = await Promise.all((["pending", "bundling", "submitted"] as const).map((s) => store.list(s, { entryPoint: address })));
      return lists.flat().sort((a, b) => a.receivedAt - b.receivedAt || (a.userOpHash < b.userOpHash ? -1 : 1));
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
      if (running) return;
      running = true;
      stopping = false;
      schedule();
    },

    async stop() {
      running = false;
      stopping = true;
      clearTimeout(timer);
      await Promise.all(inFlight);
    },
  };
}
