import type {
  BlockSource,
  ChainClient,
  Clock,
  Logger,
  MempoolPolicy,
  MempoolStore,
  PreconfirmationStore,
  RelayerSigner,
  ReputationStore,
  Submitter,
} from "@bundlekit/core";
import { createAccountSigner, createLocalKeySigner, type RelayerAccount } from "@bundlekit/signer-relayer";
import { Config, ConfigProvider, Context, Effect, Layer, Redacted } from "effect";
import { createPublicClient, http } from "viem";

/** The engine's ports as Effect services: one key each, provided by the layers of this package or your own. */

// Annotated, so that the declaration names `ChainClient` instead of spelling out viem's internal types.
const ChainClientKey: Context.ServiceClass<Chain, "@bundlekit/ChainClient", ChainClient> =
  Context.Service<Chain, ChainClient>()("@bundlekit/ChainClient");

/** Read access to the chain (a viem `PublicClient`). */
export class Chain extends ChainClientKey {
  /** A viem client over HTTP to the node at `rpcUrl` (read `Redacted`: node URLs carry API keys). */
  static layerConfig: Layer.Layer<Chain, Config.ConfigError> = Layer.effect(
    Chain,
    Effect.map(Config.Redacted("rpcUrl"), (url): ChainClient => createPublicClient({ transport: http(Redacted.value(url)) })),
  );
}

/** The mempool's durable state. */
export class MempoolStorage extends Context.Service<MempoolStorage, MempoolStore>()("@bundlekit/MempoolStore") {}

/** ERC-7562 reputation counters. */
export class ReputationStorage extends Context.Service<ReputationStorage, ReputationStore>()("@bundlekit/ReputationStore") {}

/** Preconfirmations made in pull mode: give a durable one to keep them across restarts (default: in memory). */
export class PreconfirmationStorage extends Context.Service<PreconfirmationStorage, PreconfirmationStore>()("@bundlekit/PreconfirmationStore") {}

/** Relayer keys from config: comma-separated private keys under `name` (default `relayerKeys`), read `Redacted`; a bad key fails naming its position, never its value. */
const localKeys = (name = "relayerKeys"): Config.Config<RelayerSigner> =>
  Config.Redacted(name).pipe(
    Config.mapEffect((keys) =>
      Effect.try({
        try: () => createLocalKeySigner(Redacted.value(keys).split(",").map((key) => key.trim()).filter((key) => key.length > 0)),
        catch: (error) => new Config.ConfigError(new ConfigProvider.SourceError({ message: `${name}: ${error instanceof Error ? error.message : "invalid"}` })),
      }),
    ),
  );

/**
 * The relayer accounts that pay for bundles: any `RelayerSigner`. Local keys are one way
 * (`Relayers.localKeys`); viem accounts of your own, e.g. `toAccount` over a remote signer or a
 * KMS, another (`Relayers.layerAccounts`).
 */
export class Relayers extends Context.Service<Relayers, RelayerSigner>()("@bundlekit/RelayerSigner") {
  /** A `Config` of local keys, comma-separated under `name` (default `relayerKeys`), read `Redacted`. */
  static localKeys = localKeys;

  /**
   * The signer a `Config` makes: by default local keys from `relayerKeys` (`Relayers.localKeys()`);
   * or any other, e.g. `Config.map(Config.String("kmsKeyId"), (id) => createAccountSigner([myKmsAccount(id)]))`.
   */
  static layerConfig = (config: Config.Config<RelayerSigner> = localKeys()): Layer.Layer<Relayers, Config.ConfigError> => Layer.effect(Relayers, config);

  /**
   * Relayers from viem accounts that sign (`privateKeyToAccount`, `toAccount` over a remote signer,
   * a KMS), each leased to one bundle at a time; from an `Effect` when making them needs services or can fail.
   */
  static layerAccounts = <E = never, R = never>(
    accounts: readonly RelayerAccount[] | Effect.Effect<readonly RelayerAccount[], E, R>,
  ): Layer.Layer<Relayers, E, R> =>
    Layer.effect(Relayers, Effect.map(Effect.isEffect(accounts) ? accounts : Effect.succeed(accounts), createAccountSigner));
}

/** How bundles reach the chain. Optional: without it the engine uses the submitter `relayingMode` names. */
export class BundleSubmitter extends Context.Service<BundleSubmitter, Submitter>()("@bundlekit/Submitter") {}

/** Who enters the pool and what goes into a bundle. Optional: the default ERC-7562 policy otherwise. */
export class PoolPolicy extends Context.Service<PoolPolicy, MempoolPolicy>()("@bundlekit/MempoolPolicy") {}

/** New blocks. Optional: polling the chain client otherwise. */
export class Blocks extends Context.Service<Blocks, BlockSource>()("@bundlekit/BlockSource") {}

/** The engine's logger (see `effectLogger`: the engine's lines go through Effect's `Logger`). */
export class EngineLogger extends Context.Service<EngineLogger, Logger>()("@bundlekit/Logger") {}

/** The engine's clock (see `effectClock`: Effect's `Clock`, so `TestClock` drives the engine's timers). */
export class EngineClock extends Context.Service<EngineClock, Clock>()("@bundlekit/Clock") {}
