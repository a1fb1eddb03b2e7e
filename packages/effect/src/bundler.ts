import {
  type BundleProposal,
  type BundlerSettingsInput,
  type CreateBundlerParameters,
  createBundler,
  type Bundler as Engine,
  type GasEstimate,
  type ProposeBundleRequest,
  type StatusChange,
  type UserOperation,
  type UserOperationLookup,
  type UserOperationReceipt,
} from "@bundlekit/core";
import { type Config, Context, Effect, Layer, Option, Queue, Stream } from "effect";
import type { Address, Hash } from "viem";
import { type BundlerConfig, bundlerConfig, withSubmitUrl } from "./config.ts";
import { type BundlekitError, toBundlekitError } from "./errors.ts";
import {
  type BundlerMethod,
  type CommitBundleError,
  type EstimateUserOperationGasError,
  type LookupError,
  type ProposeBundleError,
  type ReleaseBundleError,
  type SendBundleNowError,
  type SendUserOperationError,
  toMethodError,
} from "./method-errors.ts";
import {
  Blocks,
  BundleSubmitter,
  Chain,
  EngineClock,
  EngineLogger,
  MempoolStorage,
  PoolPolicy,
  PreconfirmationStorage,
  Relayers,
  ReputationStorage,
} from "./ports.ts";

/**
 * The engine as an Effect service: each method an `Effect` failing only with the tagged errors the
 * engine can raise on its path (`methodErrorTags`), status changes a `Stream`.
 */
export interface BundlerShape {
  /** The Promise API underneath, for what this face does not wrap. */
  readonly engine: Engine;
  sendUserOperation(op: UserOperation, entryPoint: Address): Effect.Effect<Hash, SendUserOperationError>;
  estimateUserOperationGas(op: UserOperation, entryPoint: Address): Effect.Effect<GasEstimate, EstimateUserOperationGasError>;
  getUserOperationByHash(userOpHash: Hash): Effect.Effect<UserOperationLookup | undefined, LookupError>;
  getUserOperationReceipt(userOpHash: Hash): Effect.Effect<UserOperationReceipt | undefined, LookupError>;
  sendBundleNow(): Effect.Effect<Hash[], SendBundleNowError>;
  proposeBundle(request: ProposeBundleRequest): Effect.Effect<BundleProposal | undefined, ProposeBundleError>;
  commitBundle(id: string, parameters?: { transactionHash?: Hash }): Effect.Effect<void, CommitBundleError>;
  releaseBundle(id: string): Effect.Effect<void, ReleaseBundleError>;
  /** Every status change from subscription on, for as long as the stream is consumed. */
  readonly statusChanges: Stream.Stream<StatusChange>;
}

/**
 * Lift a Promise API call of method `method` into an Effect failing with the method's tags. The
 * call gets the fiber's `AbortSignal`: interrupting the Effect aborts it.
 */
const lift = <M extends BundlerMethod, A>(method: M, run: (signal: AbortSignal) => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (error) => toMethodError(method, error) });

/** The service's methods over an engine of the Promise API (which the caller starts and stops). */
const make = (engine: Engine): BundlerShape => ({
  engine,
  sendUserOperation: (op, entryPoint) => lift("sendUserOperation", (signal) => engine.sendUserOperation(op, entryPoint, { signal })),
  estimateUserOperationGas: (op, entryPoint) => lift("estimateUserOperationGas", (signal) => engine.estimateUserOperationGas(op, entryPoint, undefined, { signal })),
  getUserOperationByHash: (hash) => lift("getUserOperationByHash", () => engine.getUserOperationByHash(hash)),
  getUserOperationReceipt: (hash) => lift("getUserOperationReceipt", () => engine.getUserOperationReceipt(hash)),
  sendBundleNow: () => lift("sendBundleNow", () => engine.sendBundleNow()),
  proposeBundle: (request) => lift("proposeBundle", (signal) => engine.proposeBundle(request, { signal })),
  commitBundle: (id, parameters) => lift("commitBundle", () => engine.commitBundle(id, parameters)),
  releaseBundle: (id) => lift("releaseBundle", () => engine.releaseBundle(id)),
  statusChanges: Stream.callback<StatusChange>((queue) =>
    Effect.acquireRelease(
      Effect.sync(() => engine.onStatusChange((change) => void Queue.offerUnsafe(queue, change))),
      (unsubscribe) => Effect.sync(unsubscribe),
    ),
  ),
});

/**
 * The Bundler service. Its layer creates the engine from the port services in context (chain
 * client, mempool store, relayer signer; reputation and preconfirmation stores, submitter, policy, block source,
 * logger and clock when provided) and starts it on acquire; on release it stops: bundling runs in
 * progress finish, and sent bundles stay recorded for the next engine to reconcile.
 */
export class Bundler extends Context.Service<Bundler, BundlerShape>()("@bundlekit/Bundler") {
  /** The service over an engine of the Promise API the caller created, starts and stops (e.g. an engine of its own, or a test's). */
  static make = make;

  static layer = (
    settings: BundlerSettingsInput = {},
    options: Pick<CreateBundlerParameters, "instanceId" | "entryPoints" | "l1DataCost" | "preVerificationGas" | "preconfirmationSigner"> = {},
  ): Layer.Layer<Bundler, BundlekitError, Chain | MempoolStorage | Relayers> =>
    Layer.effect(
      Bundler,
      Effect.gen(function* () {
        const optional = <I, S>(key: Context.Key<I, S>) => Effect.map(Effect.serviceOption(key), Option.getOrUndefined);
        const parameters = {
          client: yield* Chain,
          store: yield* MempoolStorage,
          signer: yield* Relayers,
          reputation: yield* optional(ReputationStorage),
          preconfirmations: yield* optional(PreconfirmationStorage),
          submitter: yield* optional(BundleSubmitter),
          policy: yield* optional(PoolPolicy),
          blocks: yield* optional(Blocks),
          logger: yield* optional(EngineLogger),
          clock: yield* optional(EngineClock),
          settings,
          ...options,
        };
        const engine = yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: async () => {
              const created = await createBundler(parameters);
              created.start();
              return created;
            },
            catch: toBundlekitError,
          }),
          (started) => Effect.promise(() => started.stop()),
        );
        return make(engine);
      }),
    );

  /**
   * `layer`, its settings and `instanceId` read from the program's `ConfigProvider` (`bundlerConfig`,
   * or a `Config` of your own: e.g. `bundlerConfig.pipe(Config.nested("bundler"))`).
   */
  static layerConfig = (
    config: Config.Config<BundlerConfig> = bundlerConfig,
    options: Pick<CreateBundlerParameters, "entryPoints" | "l1DataCost" | "preVerificationGas"> = {},
  ): Layer.Layer<Bundler, BundlekitError | Config.ConfigError, Chain | MempoolStorage | Relayers> =>
    Layer.unwrap(
      Effect.map(config, ({ settings, submitUrl, instanceId }) =>
        Bundler.layer(withSubmitUrl(settings, submitUrl), { ...options, ...Option.match(instanceId, { onNone: () => ({}), onSome: (id) => ({ instanceId: id }) }) }),
      ),
    );
}
