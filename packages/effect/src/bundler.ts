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
import { Context, Effect, Layer, Option, Queue, Stream } from "effect";
import type { Address, Hash } from "viem";
import { type BundlekitError, toBundlekitError } from "./errors.ts";
import {
  Blocks,
  BundleSubmitter,
  Chain,
  EngineClock,
  EngineLogger,
  MempoolStorage,
  PoolPolicy,
  Relayers,
  ReputationStorage,
} from "./ports.ts";

/** The engine as an Effect service: each method an `Effect` failing with a tagged error, status changes a `Stream`. */
export interface BundlerShape {
  /** The Promise API underneath, for what this face does not wrap. */
  readonly engine: Engine;
  sendUserOperation(op: UserOperation, entryPoint: Address): Effect.Effect<Hash, BundlekitError>;
  estimateUserOperationGas(op: UserOperation, entryPoint: Address): Effect.Effect<GasEstimate, BundlekitError>;
  getUserOperationByHash(userOpHash: Hash): Effect.Effect<UserOperationLookup | undefined, BundlekitError>;
  getUserOperationReceipt(userOpHash: Hash): Effect.Effect<UserOperationReceipt | undefined, BundlekitError>;
  sendBundleNow(): Effect.Effect<Hash[], BundlekitError>;
  proposeBundle(request: ProposeBundleRequest): Effect.Effect<BundleProposal | undefined, BundlekitError>;
  commitBundle(id: string, parameters?: { transactionHash?: Hash }): Effect.Effect<void, BundlekitError>;
  releaseBundle(id: string): Effect.Effect<void, BundlekitError>;
  /** Every status change from subscription on, for as long as the stream is consumed. */
  readonly statusChanges: Stream.Stream<StatusChange>;
}

/** Lift a Promise API call into an Effect whose failure is the tagged error of its wire code. */
const lift = <A>(run: () => Promise<A>): Effect.Effect<A, BundlekitError> => Effect.tryPromise({ try: run, catch: toBundlekitError });

/**
 * The Bundler service. Its layer creates the engine from the port services in context (chain
 * client, mempool store, relayer signer; reputation store, submitter, policy, block source,
 * logger and clock when provided) and starts it on acquire; on release it stops: bundling runs in
 * progress finish, and sent bundles stay recorded for the next engine to reconcile.
 */
export class Bundler extends Context.Service<Bundler, BundlerShape>()("@bundlekit/Bundler") {
  static layer = (
    settings: BundlerSettingsInput = {},
    options: Pick<CreateBundlerParameters, "instanceId" | "entryPoints" | "l1DataCost" | "preVerificationGas"> = {},
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
          submitter: yield* optional(BundleSubmitter),
          policy: yield* optional(PoolPolicy),
          blocks: yield* optional(Blocks),
          logger: yield* optional(EngineLogger),
          clock: yield* optional(EngineClock),
          settings,
          ...options,
        };
        const engine = yield* Effect.acquireRelease(
          lift(async () => {
            const created = await createBundler(parameters);
            created.start();
            return created;
          }),
          (started) => Effect.promise(() => started.stop()),
        );
        return {
          engine,
          sendUserOperation: (op, entryPoint) => lift(() => engine.sendUserOperation(op, entryPoint)),
          estimateUserOperationGas: (op, entryPoint) => lift(() => engine.estimateUserOperationGas(op, entryPoint)),
          getUserOperationByHash: (hash) => lift(() => engine.getUserOperationByHash(hash)),
          getUserOperationReceipt: (hash) => lift(() => engine.getUserOperationReceipt(hash)),
          sendBundleNow: () => lift(() => engine.sendBundleNow()),
          proposeBundle: (request) => lift(() => engine.proposeBundle(request)),
          commitBundle: (id, parameters) => lift(() => engine.commitBundle(id, parameters)),
          releaseBundle: (id) => lift(() => engine.releaseBundle(id)),
          statusChanges: Stream.callback<StatusChange>((queue) =>
            Effect.acquireRelease(
              Effect.sync(() => engine.onStatusChange((change) => void Queue.offerUnsafe(queue, change))),
              (unsubscribe) => Effect.sync(unsubscribe),
            ),
          ),
        } satisfies BundlerShape;
      }),
    );
}
